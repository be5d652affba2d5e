import { useState } from 'react';
import { Button, Card, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from 'urql';
import { graphql } from '../../../gql';
import { ErrorNote, Loading, Money, PagerControls, When, usePager } from '../../../lib/ui';

const ActiveSubscriptions = graphql(`
  query UsageActiveSubscriptions($after: String) {
    subscriptions(status: ACTIVE, first: 10, after: $after) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          customerId
          amount
          currency
          currentPeriodEnd
        }
      }
    }
  }
`);

/** Finds a subscription by its id, or from a paged list of the active ones. */
export function SubscriptionPicker({ onPick }: { onPick: (id: string) => void }) {
  const [typed, setTyped] = useState('');
  const pager = usePager();
  const [{ data, error, fetching }] = useQuery({ query: ActiveSubscriptions, variables: { after: pager.after } });
  const list = data?.subscriptions;
  return (
    <Card withBorder>
      <Stack>
        <Group
          align="flex-end"
          component="form"
          onSubmit={(e) => {
            e.preventDefault();
            if (typed.trim()) onPick(typed.trim());
          }}
        >
          <TextInput
            label="Subscription id"
            placeholder="Paste a subscription id"
            value={typed}
            onChange={(e) => setTyped(e.currentTarget.value)}
            style={{ flex: 1 }}
          />
          <Button type="submit" disabled={!typed.trim()}>
            Show usage
          </Button>
        </Group>
        <Text fw={600} size="sm">
          Or choose an active subscription
        </Text>
        <ErrorNote error={error} />
        {fetching && !list && <Loading />}
        {list && (
          <>
            <Table aria-label="Active subscriptions" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Subscription</Table.Th>
                  <Table.Th>Customer</Table.Th>
                  <Table.Th>Amount</Table.Th>
                  <Table.Th>Period ends</Table.Th>
                  <Table.Th />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.edges.map(({ node: s }) => (
                  <Table.Tr key={s.id}>
                    <Table.Td ff="monospace">{s.id}</Table.Td>
                    <Table.Td ff="monospace">{s.customerId}</Table.Td>
                    <Table.Td>
                      <Money amount={s.amount} currency={s.currency} />
                    </Table.Td>
                    <Table.Td>
                      <When at={s.currentPeriodEnd} />
                    </Table.Td>
                    <Table.Td>
                      <Button size="xs" variant="light" onClick={() => onPick(s.id)} aria-label={`Usage of ${s.id}`}>
                        Choose
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                ))}
                {list.edges.length === 0 && (
                  <Table.Tr>
                    <Table.Td colSpan={5}>
                      <Text c="dimmed" size="sm">
                        No active subscriptions.
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                )}
              </Table.Tbody>
            </Table>
            <PagerControls pager={pager} pageInfo={list.pageInfo} totalCount={list.totalCount} />
          </>
        )}
      </Stack>
    </Card>
  );
}
