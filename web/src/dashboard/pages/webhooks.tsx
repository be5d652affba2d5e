import { Fragment, useState } from 'react';
import { Alert, Button, Card, Code, Group, Modal, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { loadKeys } from '../../lib/session';
import { ErrorNote, Loading, PageTitle, PagerControls, StatusBadge, usePager, When } from '../../lib/ui';

const Endpoints = graphql(`
  query WebhookEndpoints {
    webhookEndpoints(first: 100) {
      edges {
        node {
          id
          url
          enabled
          disabledReason
          enabledEvents
          description
        }
      }
    }
  }
`);

const Deliveries = graphql(`
  query WebhookDeliveries($first: Int, $after: String, $endpointId: ID) {
    webhookDeliveries(first: $first, after: $after, endpointId: $endpointId) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          endpointId
          eventType
          status
          attempts
          responseStatus
          error
          createdAt
          nextAttemptAt
          attemptLog {
            attempt
            attemptedAt
            responseStatus
            latencyMs
            error
          }
        }
      }
    }
  }
`);

const CreateEndpoint = graphql(`
  mutation WebhookCreateEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      id
      url
      secret
    }
  }
`);
const Toggle = graphql(`
  mutation WebhookToggle($id: ID!, $enabled: Boolean) {
    toggleWebhookEndpoint(id: $id, enabled: $enabled) {
      id
      enabled
    }
  }
`);
const RollSecret = graphql(`
  mutation WebhookRollSecret($id: ID!) {
    rollWebhookEndpointSecret(id: $id) {
      id
      secret
    }
  }
`);
const Delete = graphql(`
  mutation WebhookDelete($id: ID!) {
    deleteWebhookEndpoint(id: $id) {
      id
    }
  }
`);
const Retry = graphql(`
  mutation WebhookRetry($id: ID!) {
    retryWebhookDelivery(id: $id) {
      id
      status
    }
  }
`);
const SendTest = graphql(`
  mutation WebhookSendTest($endpointId: ID, $type: String) {
    triggerTestWebhook(endpointId: $endpointId, type: $type) {
      eventId
      type
    }
  }
`);

export function Webhooks() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: Endpoints });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [create, runCreate] = useMutation(CreateEndpoint);
  const [toggle, runToggle] = useMutation(Toggle);
  const [roll, runRoll] = useMutation(RollSecret);
  const [del, runDelete] = useMutation(Delete);
  const [test, runTest] = useMutation(SendTest);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [deliveriesKey, setDeliveriesKey] = useState(0);
  return (
    <Stack>
      <PageTitle>Webhooks</PageTitle>
      <ErrorNote error={error ?? create.error ?? toggle.error ?? roll.error ?? del.error ?? test.error} />
      {secret && (
        <Alert color="green" title="Signing secret (shown once)" withCloseButton onClose={() => setSecret(null)}>
          <Code data-testid="webhook-secret">{secret}</Code>
        </Alert>
      )}
      <Card withBorder>
        <Group align="flex-end">
          <TextInput
            label="Endpoint URL"
            placeholder="https://example.com/webhooks"
            value={url}
            onChange={(e) => setUrl(e.currentTarget.value)}
            w={420}
          />
          <Button
            loading={create.fetching}
            onClick={async () => {
              const r = await runCreate({
                input: { url: url.trim(), mode: loadKeys().mode === 'live' ? 'LIVE' : 'TEST' },
              });
              if (r.data) {
                setSecret(r.data.createWebhookEndpoint.secret);
                setUrl('');
                reload();
              }
            }}
          >
            Add endpoint
          </Button>
        </Group>
      </Card>
      {fetching && !data && <Loading />}
      {data && (
        <Card withBorder padding={0}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Endpoint</Table.Th>
                <Table.Th>Events</Table.Th>
                <Table.Th>Enabled</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.webhookEndpoints.edges.map(({ node: e }) => (
                <Table.Tr key={e.id} data-endpoint-id={e.id}>
                  <Table.Td>
                    {e.url}
                    {e.disabledReason && (
                      <Text size="xs" c="red">
                        disabled: {e.disabledReason}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{e.enabledEvents.join(', ')}</Table.Td>
                  <Table.Td>
                    <Switch
                      checked={e.enabled}
                      aria-label={`Enabled: ${e.url}`}
                      onChange={(ev) => runToggle({ id: e.id, enabled: ev.currentTarget.checked }).then(reload)}
                    />
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button
                        size="compact-xs"
                        variant="default"
                        loading={test.fetching}
                        onClick={async () => {
                          const r = await runTest({ endpointId: e.id, type: 'payment.succeeded' });
                          if (!r.error) setDeliveriesKey((k) => k + 1);
                        }}
                      >
                        Send test event
                      </Button>
                      <Button
                        size="compact-xs"
                        variant="default"
                        onClick={async () => {
                          const r = await runRoll({ id: e.id });
                          if (r.data) setSecret(r.data.rollWebhookEndpointSecret.secret);
                        }}
                      >
                        Roll secret
                      </Button>
                      <Button size="compact-xs" color="red" variant="light" onClick={() => setDeleting(e.id)}>
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
      <DeliveryLog
        key={deliveriesKey}
        endpoints={data?.webhookEndpoints.edges.map((e) => ({ value: e.node.id, label: e.node.url })) ?? []}
      />
      <Modal opened={!!deleting} onClose={() => setDeleting(null)} title="Delete this endpoint?">
        <Stack>
          <Text size="sm">No more events are delivered to it; its delivery log stays.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setDeleting(null)}>
              Back
            </Button>
            <Button
              color="red"
              onClick={async () => {
                await runDelete({ id: deleting! });
                setDeleting(null);
                reload();
              }}
            >
              Delete endpoint
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

function DeliveryLog({ endpoints }: { endpoints: { value: string; label: string }[] }) {
  const [endpointId, setEndpointId] = useState<string | null>(null);
  const pager = usePager();
  const [{ data, error }, refetch] = useQuery({
    query: Deliveries,
    variables: { first: 25, after: pager.after, endpointId },
    requestPolicy: 'network-only',
  });
  const [retry, runRetry] = useMutation(Retry);
  const [open, setOpen] = useState<string | null>(null);
  const d = data?.webhookDeliveries;
  return (
    <Card withBorder padding={0}>
      <Group p="md" justify="space-between">
        <Text fw={600}>Deliveries</Text>
        <Group>
          <Select
            placeholder="Every endpoint"
            clearable
            size="xs"
            data={endpoints}
            value={endpointId}
            onChange={(v) => {
              setEndpointId(v);
              pager.reset();
            }}
            aria-label="Endpoint"
          />
          <Button size="xs" variant="default" onClick={() => refetch({ requestPolicy: 'network-only' })}>
            Refresh
          </Button>
        </Group>
      </Group>
      <ErrorNote error={error ?? retry.error} />
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Event</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Attempts</Table.Th>
            <Table.Th>Last answer</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {d?.edges.map(({ node: x }) => (
            <Fragment key={x.id}>
              <Table.Tr data-delivery-id={x.id}>
                <Table.Td>{x.eventType}</Table.Td>
                <Table.Td>
                  <StatusBadge status={x.status} />
                </Table.Td>
                <Table.Td>
                  <Button size="compact-xs" variant="subtle" onClick={() => setOpen(open === x.id ? null : x.id)}>
                    {x.attempts} {x.attempts === 1 ? 'attempt' : 'attempts'}
                  </Button>
                </Table.Td>
                <Table.Td>{x.responseStatus ?? x.error ?? '—'}</Table.Td>
                <Table.Td>
                  <When at={x.createdAt} />
                </Table.Td>
                <Table.Td>
                  <Button
                    size="compact-xs"
                    variant="default"
                    onClick={() => runRetry({ id: x.id }).then(() => refetch({ requestPolicy: 'network-only' }))}
                  >
                    Retry
                  </Button>
                </Table.Td>
              </Table.Tr>
              {open === x.id && (
                <Table.Tr>
                  <Table.Td colSpan={6}>
                    <Table data-testid="attempt-log">
                      <Table.Tbody>
                        {x.attemptLog.map((a) => (
                          <Table.Tr key={a.attempt}>
                            <Table.Td>#{a.attempt}</Table.Td>
                            <Table.Td>
                              <When at={a.attemptedAt} />
                            </Table.Td>
                            <Table.Td>{a.responseStatus ?? '—'}</Table.Td>
                            <Table.Td>{a.latencyMs} ms</Table.Td>
                            <Table.Td>{a.error ?? ''}</Table.Td>
                          </Table.Tr>
                        ))}
                      </Table.Tbody>
                    </Table>
                  </Table.Td>
                </Table.Tr>
              )}
            </Fragment>
          ))}
        </Table.Tbody>
      </Table>
      <PagerControls pager={pager} pageInfo={d?.pageInfo} totalCount={d?.totalCount} />
    </Card>
  );
}
