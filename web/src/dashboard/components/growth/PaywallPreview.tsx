import { useMemo, useState } from 'react';
import {
  Alert,
  Button,
  Card,
  Group,
  JsonInput,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../../gql';
import { ErrorNote, Loading } from '../../../lib/ui';
import type { GrowthOffering } from './offerings-query';
import { lookOf, parseConfig } from './paywall-config';
import { PaywallLayout, type Template } from './PaywallTemplates';

const PaywallQuery = graphql(`
  query GrowthPaywall($offeringId: ID!) {
    paywalls(offeringId: $offeringId, first: 1) {
      edges {
        node {
          id
          name
          template
          config
          offeringId
        }
      }
    }
  }
`);

const CreatePaywall = graphql(`
  mutation GrowthCreatePaywall($input: CreatePaywallInput!) {
    createPaywall(input: $input) {
      id
      name
      template
      config
      offeringId
    }
  }
`);

const TEMPLATES: { label: string; value: Template }[] = [
  { label: 'Simple', value: 'SIMPLE' },
  { label: 'Feature comparison', value: 'FEATURE_COMPARISON' },
  { label: 'Sliding cards', value: 'SLIDING_CARDS' },
];

const SAMPLE = {
  title: 'Go Pro',
  subtitle: 'Cancel any time',
  cta: 'Start now',
  badge: { text: 'Best value', show: true },
  features: ['No ads', 'Offline downloads'],
};

/**
 * An offering drawn in each paywall template from its real packages, products and prices. The template switch and
 * the config editor redraw it as you type; the offering's saved paywall (one per offering) is the starting point.
 * The API has no paywall update, so an existing paywall is previewed, not changed; one without a paywall can be saved.
 */
export function PaywallPreview({ offering }: { offering: GrowthOffering }) {
  const [{ data, error, fetching }, refetch] = useQuery({
    query: PaywallQuery,
    variables: { offeringId: offering.id },
  });
  const saved = data?.paywalls.edges[0]?.node;
  const [template, setTemplate] = useState<Template>('SIMPLE');
  const [text, setText] = useState('');
  const [name, setName] = useState('Main');
  const [created, create] = useMutation(CreatePaywall);

  // Start from the saved paywall when there is one, else from a sample config: once per offering (and once more
  // when a paywall gets saved), so a background refetch never throws away what is being typed.
  const seedKey = data && !fetching ? `${offering.id}:${saved?.id ?? ''}` : null;
  const [seeded, setSeeded] = useState<string | null>(null);
  if (seedKey && seedKey !== seeded) {
    setSeeded(seedKey);
    setTemplate((saved?.template as Template | undefined) ?? 'SIMPLE');
    setText(JSON.stringify(saved ? saved.config : SAMPLE, null, 2));
  }

  const parsed = useMemo(() => parseConfig(text), [text]);
  const look = 'config' in parsed ? lookOf(parsed.config) : null;

  const save = async () => {
    if (!('config' in parsed)) return;
    const r = await create({ input: { offeringId: offering.id, name, template, config: parsed.config } });
    if (!r.error) refetch({ requestPolicy: 'network-only' });
  };

  return (
    <Card withBorder data-testid="paywall-preview">
      <Text fw={600} component="h2" fz="lg" m={0}>
        Paywall preview: {offering.name}
      </Text>
      <Text size="sm" c="dimmed" mb="sm">
        {saved
          ? `Saved paywall "${saved.name}" (${saved.template.toLowerCase().replace(/_/g, ' ')}). Edits here are a preview only: paywalls cannot be changed once saved.`
          : 'This offering has no paywall yet: try a template and config, then save it.'}
      </Text>
      <ErrorNote error={error} />
      {fetching && !data && <Loading />}
      <SegmentedControl
        aria-label="Paywall template"
        value={template}
        onChange={(v) => setTemplate(v as Template)}
        data={TEMPLATES}
        mb="md"
      />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="lg">
        <Stack gap="xs">
          <JsonInput
            label="Paywall config (JSON)"
            description="title, subtitle, cta, badge, highlight (a package lookup key), colors.primary, features"
            value={text}
            onChange={setText}
            autosize
            minRows={8}
            maxRows={20}
            formatOnBlur
          />
          {'error' in parsed && (
            <Alert color="orange" role="alert">
              {parsed.error}
            </Alert>
          )}
          {!saved && data && (
            <Group align="flex-end">
              <TextInput label="Paywall name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
              <Button onClick={save} loading={created.fetching} disabled={!('config' in parsed) || !name.trim()}>
                Save paywall
              </Button>
            </Group>
          )}
          <ErrorNote error={created.error} title="The paywall was not saved" />
        </Stack>
        <Card withBorder bg="var(--mantine-color-gray-0)" aria-label="Paywall preview" role="region">
          {look && <PaywallLayout template={template} look={look} packages={offering.packages} />}
        </Card>
      </SimpleGrid>
    </Card>
  );
}
