import { useState } from 'react';
import { Alert, Stack } from '@mantine/core';
import { PageTitle } from '../../lib/ui';
import { currentMode } from '../components/ops/mode';
import { TestEventForm } from '../components/ops/TestEventForm';
import { WebhookDeliveries } from '../components/ops/WebhookDeliveries';
import { WebhookEndpoints } from '../components/ops/WebhookEndpoints';

/** Webhook endpoints of this mode and their delivery log (docs/webhooks.md). */
export function Webhooks() {
  // Bumped by a change to endpoints or a test event, so the delivery log and endpoint choices read again.
  const [version, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);
  const test = currentMode() === 'test';
  return (
    <Stack>
      <PageTitle>Webhooks</PageTitle>
      <WebhookEndpoints onChanged={bump} />
      {test ? (
        <TestEventForm onSent={bump} version={version} />
      ) : (
        <Alert color="gray">Test events can be sent in test mode only.</Alert>
      )}
      <WebhookDeliveries version={version} />
    </Stack>
  );
}
