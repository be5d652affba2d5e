/**
 * Test clocks: merchant time in test mode.
 * The module's public surface: other modules import it only through this file.
 */
export { TestClock } from './test-clock.entities';
export { TestClockResolver } from './test-clock.resolver';
export { Clock } from './test-clock.service';
export type { DueWork } from './test-clock.service';
export { testClockSql } from './test-clock.store';
