import { useState } from 'react';
import { Card, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { Select } from '../../lib/select';
import { useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../../gql';
import type { SubscriptionStatus } from '../../gql/graphql';
import { usePrefetchNext } from '../../lib/prefetch';
import { Day, ErrorNote, Loading, Money, PageTitle, PagerControls, StatusBadge, usePager } from '../../lib/ui';

const PAGE_SIZE = 25;

const SubscriptionsList = graphql(`
  query SubscriptionsList($first: Int, $after: String, $status: SubscriptionStatus, $planId: ID, $customerId: ID) {
    subscriptions(first: $first, after: $after, status: $status, planId: $planId, customerId: $customerId) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          status
          amount
          currency
          cancelAtPeriodEnd
          currentPeriodEnd
          createdAt
          customer {
            id
            email
          }
          plan {
            id
            name
          }
          product {
            id
            name
          }
        }
      }
    }
  }
`);

/** Every change of any of the merchant's subscriptions, over graphql-ws: the rows on screen update in place. */
const SubscriptionsChanged = graphql(`
  subscription SubscriptionsChanged {
    subscriptionsUpdated {
      id
      status
      cancelAtPeriodEnd
      currentPeriodEnd
      amount
    }
  }
`);

export const STATUSES: SubscriptionStatus[] = [
  'ACTIVE',
  'TRIALING',
  'PAST_DUE',
  'PAUSED',
  'HALTED',
  'CREATED',
  'CANCELLED',
  'COMPLETED',
];

type Live = {
  status: SubscriptionStatus;
  cancelAtPeriodEnd: boolean;
  currentPeriodEnd?: string | null;
  amount: number;
};

export function Subscriptions() {
  const [status, setStatus] = useState<SubscriptionStatus | null>(null);
  const [planId, setPlanId] = useState('');
  const [customerId, setCustomerId] = useState('');
  const pager = usePager();
  const variables = {
    first: PAGE_SIZE,
    after: pager.after,
    status,
    planId: planId.trim() || null,
    customerId: customerId.trim() || null,
  };
  const [{ data, error, fetching }] = useQuery({ query: SubscriptionsList, variables });
  // The latest state each subscription was pushed with (newer than the page's answer).
  const [live, setLive] = useState<Record<string, Live>>({});
  useSubscription({ query: SubscriptionsChanged }, (_prev: unknown, event) => {
    const s = event.subscriptionsUpdated;
    setLive((l) => ({ ...l, [s.id]: s }));
    return event;
  });
  const filter = (set: (v: string) => void) => (v: string) => {
    set(v);
    pager.reset();
  };
  const connection = data?.subscriptions;
  usePrefetchNext(SubscriptionsList, variables, connection?.pageInfo);
  return (
    <Stack>
      <PageTitle>Subscriptions</PageTitle>
      <Group align="flex-end">
        <Select
          label="Status"
          placeholder="Any status"
          clearable
          value={status}
          onChange={(v) => {
            setStatus(v as SubscriptionStatus | null);
            pager.reset();
          }}
          data={STATUSES.map((s) => ({ value: s, label: s.toLowerCase().replace('_', ' ') }))}
        />
        <TextInput label="Plan id" value={planId} onChange={(e) => filter(setPlanId)(e.currentTarget.value)} />
        <TextInput
          label="Customer id"
          value={customerId}
          onChange={(e) => filter(setCustomerId)(e.currentTarget.value)}
        />
      </Group>
      <ErrorNote error={error} />
      {fetching && !connection && <Loading />}
      {connection && (
        <Card withBorder padding={0}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Customer</Table.Th>
                <Table.Th>Plan</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th ta="right">Amount</Table.Th>
                <Table.Th>Period ends</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {connection.edges.map(({ node }) => {
                const s = { ...node, ...live[node.id] };
                return (
                  <Table.Tr key={s.id} data-subscription-id={s.id}>
                    <Table.Td>
                      <Link href={`/subscriptions/${s.id}`}>{s.customer?.email ?? s.id}</Link>
                    </Table.Td>
                    <Table.Td>
                      {s.product?.name} · {s.plan?.name}
                    </Table.Td>
                    <Table.Td data-testid="status">
                      <StatusBadge status={s.status} />
                      {s.cancelAtPeriodEnd && (
                        <Text span size="xs" c="orange" ml={6}>
                          ends at period end
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td ta="right">
                      <Money amount={s.amount} currency={s.currency} />
                    </Table.Td>
                    <Table.Td>
                      <Day at={s.currentPeriodEnd} />
                    </Table.Td>
                    <Table.Td>
                      <Day at={s.createdAt} />
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
          {connection.edges.length === 0 && (
            <Text p="md" c="dimmed">
              No subscriptions match.
            </Text>
          )}
        </Card>
      )}
      <PagerControls pager={pager} pageInfo={connection?.pageInfo} totalCount={connection?.totalCount} />
    </Stack>
  );
}
