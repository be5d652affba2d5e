// The sandbox's own migrations, oldest first, recorded in `sandbox_migrations` (not the service's table).
import { Migration20261123200000_sandbox_tables } from './Migration20261123200000_sandbox_tables';
import { Migration20261124090000_sandbox_clocks } from './Migration20261124090000_sandbox_clocks';

export const sandboxMigrations = [
  { name: 'Migration20261123200000_sandbox_tables', class: Migration20261123200000_sandbox_tables },
  { name: 'Migration20261124090000_sandbox_clocks', class: Migration20261124090000_sandbox_clocks },
];
