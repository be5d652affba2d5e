import { Fragment, useEffect, useState } from 'react';
import { Button, Card, Code, Group, Stack, Table, Text } from '@mantine/core';
import { Select } from '../../../lib/select';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../../gql';
import type { WebhookDeliveryStatus } from '../../../gql/graphql';
import { ErrorNote, Loading, PagerControls, StatusBadge, When, usePager } from '../../../lib/ui';

const DeliveriesList = graphql(`
  query WebhooksDeliveries($after: String, $endpointId: ID, $status: WebhookDeliveryStatus) {
    webhookDeliveries(first: 10, after: $after, endpointId: $endpointId, status: $status) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          endpointId
          eventId
          eventType
          status
          attempts
          responseStatus
          error
          latencyMs
          createdAt
          lastAttemptAt
          nextAttemptAt
          attemptLog {
            attempt
            attemptedAt
            responseStatus
            latencyMs
            error
            responseBody
          }
        }
      }
    }
  }
`);

/** Endpoints for the filter (the first hundred: a merchant has a handful). */
const EndpointChoices = graphql(`
  query WebhooksEndpointChoices {
    webhookEndpoints(first: 100) {
      edges {
        node {
          id
          url
        }
      }
    }
  }
`);

const RetryDelivery = graphql(`
  mutation WebhooksRetryDelivery($id: ID!) {
    retryWebhookDelivery(id: $id) {
      id
      status
      attempts
      responseStatus
      error
      lastAttemptAt
      nextAttemptAt
    }
  }
`);

const STATUSES: WebhookDeliveryStatus[] = ['PENDING', 'SUCCEEDED', 'FAILED'];

/** The delivery log, newest first, filtered by endpoint and status, each delivery with its attempts and a retry. */
export function WebhookDeliveries({ version }: { version: number }) {
  const [endpointId, setEndpointId] = useState<string | null>(null);
  const [status, setStatus] = useState<WebhookDeliveryStatus | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const pager = usePager();
  const [{ data, error, fetching }, reexecute] = useQuery({
    query: DeliveriesList,
    variables: { after: pager.after, endpointId, status },
  });
  const [choices, reloadChoices] = useQuery({ query: EndpointChoices });
  const [retried, retry] = useMutation(RetryDelivery);
  const list = data?.webhookDeliveries;
  const urlOf = new Map(choices.data?.webhookEndpoints.edges.map(({ node }) => [node.id, node.url]));

  // After a change (a test event, a new endpoint, a retry) deliveries are sent within seconds: the log is read
  // again while some are pending, for half a minute (later retries are minutes apart: Refresh reads them).
  const [watchUntil, setWatchUntil] = useState(() => Date.now() + 30_000);
  const watch = () => setWatchUntil(Date.now() + 30_000);
  useEffect(() => {
    if (version === 0) return;
    setWatchUntil(Date.now() + 30_000);
    reexecute({ requestPolicy: 'network-only' });
    reloadChoices({ requestPolicy: 'network-only' });
  }, [version, reexecute, reloadChoices]);
  const pending = list?.edges.some(({ node }) => node.status === 'PENDING') ?? false;
  useEffect(() => {
    if (!pending) return;
    const t = setInterval(() => {
      if (Date.now() < watchUntil) reexecute({ requestPolicy: 'network-only' });
    }, 1500);
    return () => clearInterval(t);
  }, [pending, watchUntil, reexecute]);

  return (
    <Card withBorder>
      <Stack>
        <Group justify="space-between" align="flex-end">
          <Text fw={600}>Deliveries</Text>
          <Group align="flex-end">
            <Select
              label="Endpoint"
              placeholder="All endpoints"
              clearable
              data={(choices.data?.webhookEndpoints.edges ?? []).map(({ node }) => ({
                value: node.id,
                label: node.url,
              }))}
              value={endpointId}
              onChange={(v) => {
                setEndpointId(v);
                pager.reset();
              }}
              w={280}
            />
            <Select
              label="Status"
              placeholder="Any status"
              clearable
              data={STATUSES.map((s) => ({ value: s, label: s.toLowerCase() }))}
              value={status}
              onChange={(v) => {
                setStatus(v as WebhookDeliveryStatus | null);
                pager.reset();
              }}
              w={160}
            />
            <Button variant="default" onClick={() => reexecute({ requestPolicy: 'network-only' })}>
              Refresh
            </Button>
          </Group>
        </Group>
        <ErrorNote error={error} />
        <ErrorNote error={retried.error} title="The delivery was not retried" />
        {fetching && !list && <Loading />}
        {list && (
          <>
            <Table aria-label="Webhook deliveries" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Created</Table.Th>
                  <Table.Th>Event</Table.Th>
                  <Table.Th>Endpoint</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Attempts</Table.Th>
                  <Table.Th>Last answer</Table.Th>
                  <Table.Th>Next attempt</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.edges.map(({ node: d }) => (
                  <Fragment key={d.id}>
                    <Table.Tr data-testid="webhook-delivery" data-delivery-id={d.id}>
                      <Table.Td>
                        <When at={d.createdAt} />
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" ff="monospace">
                          {d.eventType}
                        </Text>
                        <Text size="xs" c="dimmed" ff="monospace">
                          {d.eventId}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
                          {urlOf.get(d.endpointId) ?? d.endpointId}
                        </Text>
                      </Table.Td>
                      <Table.Td miw={130} style={{ whiteSpace: 'nowrap' }}>
                        <StatusBadge status={d.status} />
                      </Table.Td>
                      <Table.Td>{d.attempts}</Table.Td>
                      <Table.Td>
                        {d.responseStatus ? `HTTP ${d.responseStatus}` : d.attempts ? 'no answer' : '—'}
                        {d.latencyMs !== null && d.latencyMs !== undefined && (
                          <Text size="xs" c="dimmed">
                            {d.latencyMs} ms
                          </Text>
                        )}
                        {d.error && (
                          <Text size="xs" c="red">
                            {d.error}
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        <When at={d.nextAttemptAt} />
                      </Table.Td>
                      <Table.Td>
                        <Group gap={4} wrap="nowrap">
                          <Button
                            size="xs"
                            variant="default"
                            aria-expanded={open === d.id}
                            onClick={() => setOpen(open === d.id ? null : d.id)}
                          >
                            {open === d.id ? 'Hide attempts' : 'Show attempts'}
                          </Button>
                          <Button
                            size="xs"
                            variant="light"
                            loading={retried.fetching && retried.operation?.variables.id === d.id}
                            onClick={() =>
                              void retry({ id: d.id }).then(() => {
                                watch();
                                reexecute({ requestPolicy: 'network-only' });
                              })
                            }
                          >
                            Retry
                          </Button>
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                    {open === d.id && (
                      <Table.Tr>
                        <Table.Td colSpan={8}>
                          <AttemptLog attempts={d.attemptLog} />
                        </Table.Td>
                      </Table.Tr>
                    )}
                  </Fragment>
                ))}
                {list.edges.length === 0 && (
                  <Table.Tr>
                    <Table.Td colSpan={8}>
                      <Text c="dimmed" size="sm">
                        No deliveries.
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

type Attempt = {
  attempt: number;
  attemptedAt: string;
  responseStatus?: number | null;
  latencyMs: number;
  error?: string | null;
  responseBody?: string | null;
};

function AttemptLog({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0)
    return (
      <Text size="sm" c="dimmed">
        Not attempted yet.
      </Text>
    );
  return (
    <Table aria-label="Attempt log" withTableBorder>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Attempt</Table.Th>
          <Table.Th>At</Table.Th>
          <Table.Th>Status code</Table.Th>
          <Table.Th>Time</Table.Th>
          <Table.Th>Error</Table.Th>
          <Table.Th>Answer (start)</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {attempts.map((a) => (
          <Table.Tr key={a.attempt} data-testid="webhook-attempt">
            <Table.Td>{a.attempt}</Table.Td>
            <Table.Td>
              <When at={a.attemptedAt} />
            </Table.Td>
            <Table.Td>{a.responseStatus ?? 'no answer'}</Table.Td>
            <Table.Td>{a.latencyMs} ms</Table.Td>
            <Table.Td>{a.error ?? '—'}</Table.Td>
            <Table.Td>{a.responseBody ? <Code>{a.responseBody.slice(0, 200)}</Code> : '—'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
