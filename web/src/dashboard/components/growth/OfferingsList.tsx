import { Badge, Button, Card, Code, Group, Stack, Table, Text } from '@mantine/core';
import type { CombinedError } from 'urql';
import { ErrorNote, Loading, PagerControls, type usePager } from '../../../lib/ui';
import type { GrowthOffering } from './offerings-query';
import { planPrice } from './price-text';

interface Props {
  offerings?: GrowthOffering[];
  pageInfo?: { hasNextPage: boolean; endCursor?: string | null };
  totalCount?: number;
  pager: ReturnType<typeof usePager>;
  error?: CombinedError;
  fetching: boolean;
  selectedId: string | null;
  onPreview: (id: string) => void;
}

/** Offerings, newest first: each with its packages in position order and what each package sells. */
export function OfferingsList({
  offerings,
  pageInfo,
  totalCount,
  pager,
  error,
  fetching,
  selectedId,
  onPreview,
}: Props) {
  return (
    <Card withBorder>
      <Text fw={600} mb="sm" component="h2" fz="lg" m={0}>
        Offerings
      </Text>
      <ErrorNote error={error} />
      {fetching && !offerings && <Loading />}
      {offerings && offerings.length === 0 && (
        <Text size="sm" c="dimmed">
          No offerings yet (POST /v1/offerings).
        </Text>
      )}
      <Stack gap="md">
        {offerings?.map((o) => (
          <Card key={o.id} withBorder padding="sm" data-testid="offering">
            <Group justify="space-between" mb="xs">
              <Group gap="xs">
                <Text fw={600}>{o.name}</Text>
                <Code>{o.lookupKey}</Code>
                {o.isCurrent && (
                  <Badge color="teal" variant="light">
                    current
                  </Badge>
                )}
              </Group>
              <Button
                size="xs"
                variant={selectedId === o.id ? 'filled' : 'default'}
                onClick={() => onPreview(o.id)}
                aria-label={`Preview paywall of ${o.name}`}
              >
                Preview paywall
              </Button>
            </Group>
            {o.packages.length === 0 ? (
              <Text size="sm" c="dimmed">
                No packages attached.
              </Text>
            ) : (
              <Table aria-label={`Packages of ${o.name}`} fz="sm">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>#</Table.Th>
                    <Table.Th>Package</Table.Th>
                    <Table.Th>Products and prices</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {o.packages.map((p) => (
                    <Table.Tr key={p.id}>
                      <Table.Td>{p.position}</Table.Td>
                      <Table.Td>
                        {p.name} <Code>{p.lookupKey}</Code>
                      </Table.Td>
                      <Table.Td>
                        {p.products.length === 0 && (
                          <Text size="sm" c="dimmed">
                            No active products
                          </Text>
                        )}
                        {p.products.map((prod) => (
                          <Text size="sm" key={prod.id}>
                            <b>{prod.name}</b>
                            {prod.plans.length > 0 && ': '}
                            {prod.plans.map((pl) => `${pl.name} ${planPrice(pl)}`).join(' · ')}
                          </Text>
                        ))}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Card>
        ))}
      </Stack>
      {offerings && offerings.length > 0 && <PagerControls pager={pager} pageInfo={pageInfo} totalCount={totalCount} />}
    </Card>
  );
}
