import { useState } from 'react';
import { Alert, Badge, Button, Card, Group, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../../gql';
import { ErrorNote, Loading, PagerControls, When, usePager } from '../../../lib/ui';
import { ConfirmModal } from './ConfirmModal';
import { SecretField } from './SecretField';
import { eventFilters, useEventTypes } from './webhook-events';
import { currentMode } from './mode';

const EndpointsList = graphql(`
  query WebhooksEndpoints($after: String) {
    webhookEndpoints(first: 10, after: $after) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          url
          description
          enabled
          disabledReason
          enabledEvents
          previousSecretExpiresAt
          createdAt
        }
      }
    }
  }
`);

const CreateEndpoint = graphql(`
  mutation WebhooksCreateEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      id
      url
      secret
      enabled
      enabledEvents
    }
  }
`);

const ToggleEndpoint = graphql(`
  mutation WebhooksToggleEndpoint($id: ID!, $enabled: Boolean!) {
    toggleWebhookEndpoint(id: $id, enabled: $enabled) {
      id
      enabled
      disabledReason
    }
  }
`);

const RollSecret = graphql(`
  mutation WebhooksRollSecret($id: ID!) {
    rollWebhookEndpointSecret(id: $id) {
      id
      url
      secret
      previousSecretExpiresAt
    }
  }
`);

const DeleteEndpoint = graphql(`
  mutation WebhooksDeleteEndpoint($id: ID!) {
    deleteWebhookEndpoint(id: $id) {
      id
      deleted
    }
  }
`);

type Endpoint = { id: string; url: string };

/** Webhook endpoints of this mode: create, enable/disable, roll the signing secret, delete. */
export function WebhookEndpoints({ onChanged }: { onChanged: () => void }) {
  const pager = usePager();
  const [{ data, error, fetching }, reexecute] = useQuery({ query: EndpointsList, variables: { after: pager.after } });
  const refresh = () => {
    reexecute({ requestPolicy: 'network-only' });
    onChanged();
  };
  const [secret, setSecret] = useState<{ url: string; secret: string; rolled: boolean } | null>(null);
  const [toggled, toggle] = useMutation(ToggleEndpoint);
  const [rollTarget, setRollTarget] = useState<Endpoint | null>(null);
  const [rolled, roll] = useMutation(RollSecret);
  const [deleteTarget, setDeleteTarget] = useState<Endpoint | null>(null);
  const [deleted, remove] = useMutation(DeleteEndpoint);
  const list = data?.webhookEndpoints;

  return (
    <Stack>
      <CreateEndpointForm
        onCreated={(url, s) => {
          setSecret({ url, secret: s, rolled: false });
          pager.reset();
          refresh();
        }}
      />
      {secret && (
        <Alert
          color="green"
          title={secret.rolled ? 'New signing secret' : 'Endpoint created'}
          withCloseButton
          onClose={() => setSecret(null)}
        >
          <Stack gap="xs">
            <Text size="sm">
              The signing secret of {secret.url} is shown this once: keep it where your receiver can verify signatures
              with it.
              {secret.rolled && ' The previous secret keeps signing beside it for 24 hours.'}
            </Text>
            <SecretField label="Signing secret" value={secret.secret} />
          </Stack>
        </Alert>
      )}
      <ErrorNote error={toggled.error} title="The endpoint could not be switched" />
      <Card withBorder>
        <Text fw={600} mb="sm">
          Endpoints
        </Text>
        <ErrorNote error={error} />
        {fetching && !list && <Loading />}
        {list && (
          <>
            <Table aria-label="Webhook endpoints" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>URL</Table.Th>
                  <Table.Th>Events</Table.Th>
                  <Table.Th>Enabled</Table.Th>
                  <Table.Th>Created</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.edges.map(({ node: e }) => (
                  <Table.Tr key={e.id} data-testid="webhook-endpoint">
                    <Table.Td>
                      <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
                        {e.url}
                      </Text>
                      {e.description && (
                        <Text size="xs" c="dimmed">
                          {e.description}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        {e.enabledEvents.map((t) => (
                          <Badge key={t} variant="outline" size="sm" tt="none">
                            {t === '*' ? 'all events' : t}
                          </Badge>
                        ))}
                      </Group>
                    </Table.Td>
                    <Table.Td>
                      <Switch
                        checked={e.enabled}
                        aria-label={`Enabled: ${e.url}`}
                        onChange={(ev) => void toggle({ id: e.id, enabled: ev.currentTarget.checked }).then(refresh)}
                      />
                      {e.disabledReason === 'failing' && (
                        <Text size="xs" c="red">
                          Disabled after 5 days of failures
                        </Text>
                      )}
                      {e.previousSecretExpiresAt && (
                        <Text size="xs" c="dimmed">
                          Old secret signs until <When at={e.previousSecretExpiresAt} />
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <When at={e.createdAt} />
                    </Table.Td>
                    <Table.Td>
                      <Group gap={4} wrap="nowrap">
                        <Button size="xs" variant="default" onClick={() => setRollTarget(e)}>
                          Roll secret
                        </Button>
                        <Button size="xs" color="red" variant="light" onClick={() => setDeleteTarget(e)}>
                          Delete
                        </Button>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
                {list.edges.length === 0 && (
                  <Table.Tr>
                    <Table.Td colSpan={5}>
                      <Text c="dimmed" size="sm">
                        No endpoints yet.
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                )}
              </Table.Tbody>
            </Table>
            <PagerControls pager={pager} pageInfo={list.pageInfo} totalCount={list.totalCount} />
          </>
        )}
      </Card>
      <ConfirmModal
        opened={!!rollTarget}
        title="Roll the signing secret?"
        confirmLabel="Roll secret"
        color="orange"
        busy={rolled.fetching}
        error={rolled.error}
        onClose={() => setRollTarget(null)}
        onConfirm={async () => {
          if (!rollTarget) return;
          const r = await roll({ id: rollTarget.id });
          const s = r.data?.rollWebhookEndpointSecret;
          if (s) {
            setSecret({ url: s.url, secret: s.secret, rolled: true });
            setRollTarget(null);
            refresh();
          }
        }}
      >
        <Text size="sm">
          {rollTarget?.url} gets a new signing secret, shown once. The current one keeps signing beside it for 24 hours,
          so you have a day to switch your receiver over.
        </Text>
      </ConfirmModal>
      <ConfirmModal
        opened={!!deleteTarget}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        busy={deleted.fetching}
        error={deleted.error}
        onClose={() => setDeleteTarget(null)}
        onConfirm={async () => {
          if (!deleteTarget) return;
          const r = await remove({ id: deleteTarget.id });
          if (r.data) {
            setDeleteTarget(null);
            refresh();
          }
        }}
      >
        <Text size="sm">
          {deleteTarget?.url} will get no more events, and its pending deliveries fail. This cannot be undone.
        </Text>
      </ConfirmModal>
    </Stack>
  );
}

function CreateEndpointForm({ onCreated }: { onCreated: (url: string, secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [eventsText, setEventsText] = useState('*');
  const events = eventsText
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const [description, setDescription] = useState('');
  const [created, create] = useMutation(CreateEndpoint);
  const eventTypes = useEventTypes();
  const mode = currentMode();
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const r = await create({
      input: {
        url: url.trim(),
        mode: mode === 'live' ? 'LIVE' : 'TEST',
        enabledEvents: events.length ? events : ['*'],
        description: description.trim() || undefined,
      },
    });
    const ep = r.data?.createWebhookEndpoint;
    if (ep) {
      setUrl('');
      setDescription('');
      setEventsText('*');
      onCreated(ep.url, ep.secret);
    }
  };
  return (
    <Card withBorder component="form" onSubmit={submit}>
      <Stack>
        <Text fw={600}>Add an endpoint</Text>
        <TextInput
          label="Endpoint URL"
          description={mode === 'live' ? 'https, on a public address' : 'https or http, on a public address'}
          placeholder="https://example.com/webhooks/cadence"
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          required
        />
        {/* A plain text field with the known kinds as suggestions (a datalist): a tags combobox cost 10 KB. */}
        <TextInput
          label="Event types"
          description='Comma-separated: "*" for every event, a prefix such as "payment.*", or single kinds'
          value={eventsText}
          onChange={(e) => setEventsText(e.currentTarget.value)}
          list="webhook-event-kinds"
        />
        <datalist id="webhook-event-kinds">
          {eventFilters(eventTypes).map((k) => (
            <option key={k} value={k} />
          ))}
        </datalist>
        <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <ErrorNote error={created.error} title="The endpoint was not created" />
        <Group>
          <Button type="submit" loading={created.fetching} disabled={!url.trim()}>
            Add endpoint
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
