import { Badge, Card, Group, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../../gql';
import { Day, ErrorNote, Loading, Money, PageTitle, StatusBadge } from '../../lib/ui';
import { revenueText } from './customers';

const CustomerDetailQuery = graphql(`
  query CustomerDetail($id: ID!) {
    customer(id: $id) {
      id
      email
      name
      phone
      gstin
      stateCode
      address
      createdAt
      lifetimeRevenue {
        currency
        amount
      }
    }
    subscriptions(customerId: $id, first: 50) {
      edges {
        node {
          id
          status
          amount
          currency
          currentPeriodEnd
          plan {
            name
          }
          product {
            name
          }
        }
      }
    }
    customerEntitlements(customerId: $id) {
      entitlements {
        entitlementId
        lookupKey
        name
        expiresAt
      }
    }
  }
`);

export function CustomerDetail({ params }: { params: { id: string } }) {
  const [{ data, error, fetching }] = useQuery({ query: CustomerDetailQuery, variables: { id: params.id } });
  if (!data) return fetching ? <Loading /> : <ErrorNote error={error} />;
  const c = data.customer;
  return (
    <Stack>
      <PageTitle>{c.name ? `${c.name} · ${c.email}` : c.email}</PageTitle>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Text size="sm">Lifetime revenue</Text>
          <Text fz="xl" fw={700} data-testid="customer-lifetime-revenue">
            {revenueText(c.lifetimeRevenue)}
          </Text>
          <Text size="xs" c="dimmed" mt="xs">
            Customer since <Day at={c.createdAt} />
            {c.gstin ? ` · GSTIN ${c.gstin}` : ''}
            {c.phone ? ` · ${c.phone}` : ''}
          </Text>
          {c.address && (
            <Text size="xs" c="dimmed">
              {c.address}
            </Text>
          )}
        </Card>
        <Card withBorder>
          <Text size="sm" mb="xs">
            Entitlements now
          </Text>
          <Group gap="xs">
            {data.customerEntitlements.entitlements.map((e) => (
              <Badge key={e.entitlementId} variant="light" title={e.expiresAt ?? ''}>
                {e.name} ({e.lookupKey})
              </Badge>
            ))}
            {data.customerEntitlements.entitlements.length === 0 && (
              <Text size="sm" c="dimmed">
                None
              </Text>
            )}
          </Group>
        </Card>
      </SimpleGrid>
      <Card withBorder padding={0}>
        <Text fw={600} p="md" pb={0}>
          Subscriptions
        </Text>
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Plan</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th ta="right">Amount</Table.Th>
              <Table.Th>Period ends</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {data.subscriptions.edges.map(({ node: s }) => (
              <Table.Tr key={s.id}>
                <Table.Td>
                  <Link href={`/subscriptions/${s.id}`}>
                    {s.product?.name} · {s.plan?.name}
                  </Link>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={s.status} />
                </Table.Td>
                <Table.Td ta="right">
                  <Money amount={s.amount} currency={s.currency} />
                </Table.Td>
                <Table.Td>
                  <Day at={s.currentPeriodEnd} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
    </Stack>
  );
}
