import { useState } from 'react';
import { Card, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Day, ErrorNote, Loading, PageTitle } from '../../lib/ui';

const UsageOfSubscription = graphql(`
  query UsageOfSubscription($id: ID!) {
    usageSummary(subscriptionId: $id) {
      subscriptionId
      aggregations {
        id
        billingPeriodStart
        billingPeriodEnd
        eventType
        unit
        eventCount
        totalQuantityDecimal
      }
    }
  }
`);

/** A subscription's metered usage per billing period and event type (docs/usage.md). */
export function Usage() {
  const initial = new URLSearchParams(location.search).get('subscription') ?? '';
  const [id, setId] = useState(initial);
  const valid = /^[0-9a-f-]{36}$/i.test(id.trim());
  const [{ data, error, fetching }] = useQuery({
    query: UsageOfSubscription,
    variables: { id: id.trim() },
    pause: !valid,
  });
  const rows = data?.usageSummary.aggregations ?? [];
  return (
    <Stack>
      <PageTitle>Usage</PageTitle>
      <TextInput
        label="Subscription id"
        description="The subscription's id, from its page under Subscriptions"
        value={id}
        onChange={(e) => setId(e.currentTarget.value)}
        maw={420}
      />
      <ErrorNote error={error} />
      {fetching && <Loading />}
      {valid && data && (
        <Card withBorder padding={0}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Period</Table.Th>
                <Table.Th>Event type</Table.Th>
                <Table.Th ta="right">Events</Table.Th>
                <Table.Th ta="right">Quantity</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((a) => (
                <Table.Tr key={a.id}>
                  <Table.Td>
                    <Day at={a.billingPeriodStart} /> – <Day at={a.billingPeriodEnd} />
                  </Table.Td>
                  <Table.Td>{a.eventType}</Table.Td>
                  <Table.Td ta="right">{a.eventCount}</Table.Td>
                  <Table.Td ta="right" data-testid="usage-quantity">
                    {a.totalQuantityDecimal} {a.unit}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {rows.length === 0 && (
            <Text p="md" c="dimmed">
              No usage reported for this subscription.
            </Text>
          )}
        </Card>
      )}
    </Stack>
  );
}
