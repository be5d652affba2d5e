import { Alert, Stack } from '@mantine/core';
import { PageTitle } from '../../lib/ui';
import { currentMode } from '../components/ops/mode';
import { RollKeyPanel } from '../components/ops/RollKeyPanel';
import { TestClockPanel } from '../components/ops/TestClockPanel';

/** The API key of this mode and, in test mode, the test clock. */
export function Developers() {
  const test = currentMode() === 'test';
  return (
    <Stack>
      <PageTitle>Developers</PageTitle>
      <RollKeyPanel />
      {test ? (
        <TestClockPanel />
      ) : (
        <Alert color="gray" title="Test clock">
          The test clock exists only in test mode: live mode always runs on real time. Switch to Test to move it.
        </Alert>
      )}
    </Stack>
  );
}
