import { useEffect, useState } from 'react';
import { Alert, Button, Card, Group, Stack, Text } from '@mantine/core';
import { Select } from '../../../lib/select';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../../gql';
import { ErrorNote } from '../../../lib/ui';
import { useEventTypes } from './webhook-events';

const TriggerTest = graphql(`
  mutation WebhooksTriggerTest($type: String, $endpointId: ID) {
    triggerTestWebhook(type: $type, endpointId: $endpointId) {
      eventId
      type
      deliveries {
        id
        endpointId
        status
      }
    }
  }
`);

const TestEndpointChoices = graphql(`
  query WebhooksTestEndpointChoices {
    webhookEndpoints(first: 100) {
      edges {
        node {
          id
          url
          enabled
        }
      }
    }
  }
`);

/** Sends a simulated event to the enabled test endpoints that take it, or to one of them (test mode only). */
export function TestEventForm({ onSent, version }: { onSent: () => void; version: number }) {
  const [type, setType] = useState<string>('payment.succeeded');
  const [endpointId, setEndpointId] = useState<string | null>(null);
  const [choices, reload] = useQuery({ query: TestEndpointChoices });
  useEffect(() => {
    if (version > 0) reload({ requestPolicy: 'network-only' });
  }, [version, reload]);
  const [sent, send] = useMutation(TriggerTest);
  const eventTypes = useEventTypes();
  const result = sent.data?.triggerTestWebhook;
  return (
    <Card withBorder>
      <Stack>
        <Text fw={600}>Send a test event</Text>
        <Group align="flex-end">
          <Select
            label="Event type"
            data={eventTypes}
            value={type}
            onChange={(v) => v && setType(v)}
            w={300}
            searchable
          />
          <Select
            label="To endpoint"
            placeholder="Every enabled endpoint that takes it"
            clearable
            data={(choices.data?.webhookEndpoints.edges ?? [])
              .filter(({ node }) => node.enabled)
              .map(({ node }) => ({ value: node.id, label: node.url }))}
            value={endpointId}
            onChange={setEndpointId}
            w={320}
          />
          <Button
            loading={sent.fetching}
            onClick={async () => {
              const r = await send({ type, endpointId });
              if (r.data) onSent();
            }}
          >
            Send test event
          </Button>
        </Group>
        <ErrorNote error={sent.error} title="The test event was not sent" />
        {result && !sent.error && (
          <Alert color={result.deliveries.length ? 'green' : 'yellow'} data-testid="test-event-result">
            {result.deliveries.length
              ? `Sent ${result.type} (event ${result.eventId}) to ${result.deliveries.length} endpoint${result.deliveries.length === 1 ? '' : 's'}: see the deliveries below.`
              : `${result.type} (event ${result.eventId}) was recorded, but no enabled endpoint takes it.`}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
