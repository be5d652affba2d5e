import { useState } from 'react';
import { Button, Stack } from '@mantine/core';
import { PageTitle } from '../../lib/ui';
import { SubscriptionPicker } from '../components/ops/SubscriptionPicker';
import { UsageSummaryView } from '../components/ops/UsageSummaryView';

/** Metered usage of one subscription (docs/usage.md): pick it, then see its periods, quantities and amounts. */
export function Usage() {
  const [picked, setPicked] = useState<string | null>(null);
  return (
    <Stack>
      <PageTitle
        right={
          picked && (
            <Button variant="default" onClick={() => setPicked(null)}>
              Choose another subscription
            </Button>
          )
        }
      >
        Usage
      </PageTitle>
      {picked ? <UsageSummaryView subscriptionId={picked} /> : <SubscriptionPicker onPick={setPicked} />}
    </Stack>
  );
}
