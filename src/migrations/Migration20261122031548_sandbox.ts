import { Migration } from '@mikro-orm/migrations';

/**
 * Once created the gateway sandbox's tables. The sandbox now owns them: its own migrations
 * (src/gateways/sandbox/migrations, recorded in `sandbox_migrations`) create them when it starts, and leave the
 * tables this migration made in older databases as they are. Kept, empty, so migration histories stay the same.
 */
export class Migration20261122031548_sandbox extends Migration {
  override async up(): Promise<void> {}

  override async down(): Promise<void> {}
}
