import { Migration } from '@mikro-orm/migrations';

/**
 * Bounded test-clock advances (docs/sandbox.md; src/modules/test-clock): the record of an advance not finished.
 * - `advance_target`: set when an advance begins (under the merchant's advance lock) to where it is going; cleared
 *   when it gets there. Still set after the advance stopped early (its client left, the service stopped, or it
 *   failed, or its process died): the next advance resumes towards it.
 * - `advance_interrupted_at`: the test-clock time where an advance that stopped cleanly stopped (every piece of work
 *   due up to it done); null while one runs and when none is unfinished.
 * GET /v1/test-clock and advance answers show both (`advance_target`, `advance_interrupted_at`).
 */
export class Migration20261128090000_test_clock_advances extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "test_clocks" add column "advance_target" timestamptz null, add column "advance_interrupted_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "test_clocks" drop column if exists "advance_interrupted_at", drop column if exists "advance_target";`);
  }

}
