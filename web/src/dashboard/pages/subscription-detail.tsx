import { useState } from 'react';
import { Alert, Button, Card, Group, Modal, SimpleGrid, Stack, Table, Text, Timeline } from '@mantine/core';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../../gql';
import { Day, ErrorNote, Loading, Money, PageTitle, StatusBadge, When } from '../../lib/ui';
import { ChangePlanModal } from '../components/subscriptions/ChangePlanModal';

const SubscriptionDetailQuery = graphql(`
  query SubscriptionDetail($id: ID!) {
    subscription(id: $id) {
      id
      status
      amount
      currency
      provider
      cancelAtPeriodEnd
      currentPeriodStart
      currentPeriodEnd
      trialEnd
      createdAt
      pendingGatewayCommand
      productId
      priceId
      customer {
        id
        email
        name
      }
      plan {
        id
        name
      }
      product {
        id
        name
      }
      scheduledChange {
        planId
        priceId
        effectiveAt
      }
      upcomingDebit {
        debitAt
        amountDue
        currency
        kind
      }
      events {
        id
        eventType
        fromState
        toState
        triggeredBy
        createdAt
      }
    }
    invoices(subscriptionId: $id, first: 50) {
      edges {
        node {
          id
          number
          type
          status
          total
          currency
          issuedAt
          relatedInvoiceId
        }
      }
    }
  }
`);

const SubscriptionChanged = graphql(`
  subscription SubscriptionChanged($id: ID) {
    subscriptionUpdated(id: $id) {
      id
      status
      cancelAtPeriodEnd
    }
  }
`);

const Pause = graphql(`
  mutation SubscriptionPause($id: ID!) {
    pauseSubscription(id: $id) {
      id
      status
    }
  }
`);
const Resume = graphql(`
  mutation SubscriptionResume($id: ID!) {
    resumeSubscription(id: $id) {
      id
      status
    }
  }
`);
const Cancel = graphql(`
  mutation SubscriptionCancel($id: ID!, $atPeriodEnd: Boolean) {
    cancelSubscription(id: $id, cancelAtPeriodEnd: $atPeriodEnd) {
      id
      status
      cancelAtPeriodEnd
    }
  }
`);
const RemoveCancellation = graphql(`
  mutation SubscriptionRemoveCancellation($id: ID!) {
    removeScheduledCancellation(id: $id) {
      id
      cancelAtPeriodEnd
    }
  }
`);
const RemoveChange = graphql(`
  mutation SubscriptionRemoveChange($id: ID!) {
    removeScheduledChange(id: $id) {
      id
    }
  }
`);

type Confirm = { title: string; text: string; run: () => Promise<unknown> } | null;

export function SubscriptionDetail({ params }: { params: { id: string } }) {
  const id = params.id;
  const [{ data, error, fetching }, refetch] = useQuery({ query: SubscriptionDetailQuery, variables: { id } });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  useSubscription({ query: SubscriptionChanged, variables: { id } }, (_p: unknown, e) => {
    reload();
    return e;
  });
  const [pause, runPause] = useMutation(Pause);
  const [resume, runResume] = useMutation(Resume);
  const [cancel, runCancel] = useMutation(Cancel);
  const [removeCancel, runRemoveCancel] = useMutation(RemoveCancellation);
  const [removeChange, runRemoveChange] = useMutation(RemoveChange);
  const [confirm, setConfirm] = useState<Confirm>(null);
  const [changing, setChanging] = useState(false);
  const s = data?.subscription;
  const commandError = pause.error ?? resume.error ?? cancel.error ?? removeCancel.error ?? removeChange.error;
  const after = (p: Promise<{ error?: unknown }>) => p.then((r) => (r.error ? undefined : reload()));
  if (!s) return fetching ? <Loading /> : <ErrorNote error={error} />;

  const live = s.status === 'ACTIVE' || s.status === 'TRIALING';
  return (
    <Stack>
      <PageTitle right={<StatusBadge status={s.status} />}>
        {s.product?.name} · {s.plan?.name}
      </PageTitle>
      <ErrorNote error={error ?? commandError} />
      {s.pendingGatewayCommand && (
        <Alert color="yellow">
          The gateway has not confirmed the last {s.pendingGatewayCommand} yet: it settles on its event or the next
          reconciliation.
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Stack gap={4}>
            <Text size="sm">
              Customer: <Link href={`/customers/${s.customer?.id}`}>{s.customer?.email}</Link>
            </Text>
            <Text size="sm">
              Amount: <Money amount={s.amount} currency={s.currency} /> ({s.provider.toLowerCase()})
            </Text>
            <Text size="sm">
              Period: <Day at={s.currentPeriodStart} /> – <Day at={s.currentPeriodEnd} />
            </Text>
            {s.trialEnd && (
              <Text size="sm">
                Trial ends: <Day at={s.trialEnd} />
              </Text>
            )}
            {s.cancelAtPeriodEnd && (
              <Text size="sm" c="orange" data-testid="cancel-at-period-end">
                Cancels at the end of the period.
              </Text>
            )}
            {s.scheduledChange && (
              <Text size="sm" c="blue" data-testid="scheduled-change">
                Plan change scheduled for <Day at={s.scheduledChange.effectiveAt} />.
              </Text>
            )}
            {s.upcomingDebit && (
              <Text size="sm" data-testid="upcoming-debit">
                Announced debit ({s.upcomingDebit.kind === 'RETRY' ? 'retry' : 'renewal'}):{' '}
                <Money amount={s.upcomingDebit.amountDue} currency={s.upcomingDebit.currency} /> on{' '}
                <Day at={s.upcomingDebit.debitAt} />
              </Text>
            )}
            <Text size="xs" c="dimmed">
              {s.id} · created <When at={s.createdAt} />
            </Text>
          </Stack>
        </Card>
        <Card withBorder>
          <Text fw={600} mb="xs">
            Commands
          </Text>
          <Group gap="xs">
            {s.status === 'ACTIVE' && (
              <Button variant="default" loading={pause.fetching} onClick={() => after(runPause({ id }))}>
                Pause
              </Button>
            )}
            {s.status === 'PAUSED' && (
              <Button variant="default" loading={resume.fetching} onClick={() => after(runResume({ id }))}>
                Resume
              </Button>
            )}
            {live && (
              <Button variant="default" onClick={() => setChanging(true)}>
                Change plan
              </Button>
            )}
            {live && !s.cancelAtPeriodEnd && (
              <Button
                variant="default"
                onClick={() =>
                  setConfirm({
                    title: 'Cancel at period end?',
                    text: 'The subscription stays active until the end of the current period, then ends.',
                    run: () => after(runCancel({ id, atPeriodEnd: true })),
                  })
                }
              >
                Cancel at period end
              </Button>
            )}
            {s.cancelAtPeriodEnd && (
              <Button variant="default" loading={removeCancel.fetching} onClick={() => after(runRemoveCancel({ id }))}>
                Remove scheduled cancellation
              </Button>
            )}
            {s.scheduledChange && (
              <Button variant="default" loading={removeChange.fetching} onClick={() => after(runRemoveChange({ id }))}>
                Remove scheduled change
              </Button>
            )}
            {!['CANCELLED', 'COMPLETED'].includes(s.status) && (
              <Button
                color="red"
                variant="light"
                onClick={() =>
                  setConfirm({
                    title: 'Cancel now?',
                    text: 'The subscription ends now, at the gateway too. This cannot be undone.',
                    run: () => after(runCancel({ id, atPeriodEnd: false })),
                  })
                }
              >
                Cancel now
              </Button>
            )}
          </Group>
        </Card>
      </SimpleGrid>

      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Text fw={600} mb="sm">
            Timeline
          </Text>
          <Timeline bulletSize={14} lineWidth={2} active={s.events.length}>
            {s.events.map((e) => (
              <Timeline.Item key={e.id} title={e.eventType} data-testid="timeline-event">
                <Text size="xs" c="dimmed">
                  {e.fromState ? `${e.fromState.toLowerCase()} → ` : ''}
                  {e.toState.toLowerCase()} · {e.triggeredBy} · <When at={e.createdAt} />
                </Text>
              </Timeline.Item>
            ))}
          </Timeline>
        </Card>
        <Card withBorder padding={0}>
          <Text fw={600} p="md" pb={0}>
            Invoices and credit notes
          </Text>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Number</Table.Th>
                <Table.Th>Issued</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th ta="right">Total</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.invoices.edges.map(({ node: inv }) => (
                <Table.Tr key={inv.id} data-invoice-type={inv.type}>
                  <Table.Td>
                    {inv.type === 'CREDIT_NOTE' ? 'Credit note ' : ''}
                    {inv.number}
                  </Table.Td>
                  <Table.Td>
                    <Day at={inv.issuedAt} />
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={inv.status} />
                  </Table.Td>
                  <Table.Td ta="right">
                    <Money amount={inv.total} currency={inv.currency} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      </SimpleGrid>

      <Modal opened={!!confirm} onClose={() => setConfirm(null)} title={confirm?.title}>
        <Stack>
          <Text size="sm">{confirm?.text}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirm(null)}>
              Back
            </Button>
            <Button
              color="red"
              loading={cancel.fetching}
              onClick={async () => {
                await confirm?.run();
                setConfirm(null);
              }}
            >
              Confirm
            </Button>
          </Group>
        </Stack>
      </Modal>
      {changing && (
        <ChangePlanModal
          subscription={s}
          onClose={() => setChanging(false)}
          onChanged={() => {
            setChanging(false);
            reload();
          }}
        />
      )}
    </Stack>
  );
}
