// The sandbox's own migrations, oldest first, recorded in `sandbox_migrations` (not the service's table).
import { Migration20261123200000_sandbox_tables } from './Migration20261123200000_sandbox_tables';
import { Migration20261124090000_sandbox_clocks } from './Migration20261124090000_sandbox_clocks';
import { Migration20261124100000_sandbox_subscription_due } from './Migration20261124100000_sandbox_subscription_due';
import { Migration20261128040000_sandbox_tls_identities } from './Migration20261128040000_sandbox_tls_identities';
import { Migration20261206100000_sandbox_irp } from './Migration20261206100000_sandbox_irp';

export const sandboxMigrations = [
  { name: 'Migration20261123200000_sandbox_tables', class: Migration20261123200000_sandbox_tables },
  { name: 'Migration20261124090000_sandbox_clocks', class: Migration20261124090000_sandbox_clocks },
  { name: 'Migration20261124100000_sandbox_subscription_due', class: Migration20261124100000_sandbox_subscription_due },
  { name: 'Migration20261128040000_sandbox_tls_identities', class: Migration20261128040000_sandbox_tls_identities },
  { name: 'Migration20261206100000_sandbox_irp', class: Migration20261206100000_sandbox_irp },
];
