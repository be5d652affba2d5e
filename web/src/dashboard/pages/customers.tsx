import { useState } from 'react';
import { Card, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../../gql';
import { formatMoney } from '../../lib/money';
import { Day, ErrorNote, Loading, PageTitle, PagerControls, usePager } from '../../lib/ui';

const CustomersList = graphql(`
  query CustomersList($first: Int, $after: String, $email: String) {
    customers(first: $first, after: $after, email: $email) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          email
          name
          createdAt
          activeSubscriptionCount
          lifetimeRevenue {
            currency
            amount
          }
        }
      }
    }
  }
`);

/** Lifetime revenue per currency, e.g. "₹1,234.00 · $12.00" (no conversion between currencies). */
export const revenueText = (rows: { currency: string; amount: number }[]) =>
  rows.length ? rows.map((r) => formatMoney(r.amount, r.currency)).join(' · ') : '—';

export function Customers() {
  const [email, setEmail] = useState('');
  const pager = usePager();
  const [{ data, error, fetching }] = useQuery({
    query: CustomersList,
    variables: { first: 25, after: pager.after, email: email.trim() || null },
  });
  const c = data?.customers;
  return (
    <Stack>
      <PageTitle>Customers</PageTitle>
      <TextInput
        label="E-mail"
        placeholder="Exact e-mail address"
        value={email}
        onChange={(e) => {
          setEmail(e.currentTarget.value);
          pager.reset();
        }}
        maw={360}
      />
      <ErrorNote error={error} />
      {fetching && !c && <Loading />}
      {c && (
        <Card withBorder padding={0}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Customer</Table.Th>
                <Table.Th>Active subscriptions</Table.Th>
                <Table.Th ta="right">Lifetime revenue</Table.Th>
                <Table.Th>Since</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {c.edges.map(({ node }) => (
                <Table.Tr key={node.id} data-customer-id={node.id}>
                  <Table.Td>
                    <Link href={`/customers/${node.id}`}>{node.email}</Link>
                    {node.name && (
                      <Text span size="xs" c="dimmed" ml={6}>
                        {node.name}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{node.activeSubscriptionCount}</Table.Td>
                  <Table.Td ta="right" data-testid="lifetime-revenue">
                    {revenueText(node.lifetimeRevenue)}
                  </Table.Td>
                  <Table.Td>
                    <Day at={node.createdAt} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
      <PagerControls pager={pager} pageInfo={c?.pageInfo} totalCount={c?.totalCount} />
    </Stack>
  );
}
