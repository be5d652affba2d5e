import { Card, Code, Table, Text } from '@mantine/core';
import { useQuery } from 'urql';
import { graphql } from '../../../gql';
import { Day, ErrorNote, Loading, PagerControls, usePager } from '../../../lib/ui';

const EntitlementsQuery = graphql(`
  query GrowthEntitlements($first: Int!, $after: String) {
    entitlements(first: $first, after: $after) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          lookupKey
          name
          description
          productIds
          createdAt
        }
      }
    }
  }
`);

/** The feature gates, newest first, with how many products grant each. */
export function EntitlementsList() {
  const pager = usePager();
  const [{ data, error, fetching }] = useQuery({
    query: EntitlementsQuery,
    variables: { first: 10, after: pager.after },
  });
  const conn = data?.entitlements;
  return (
    <Card withBorder>
      <Text fw={600} mb="sm" component="h2" fz="lg" m={0}>
        Entitlements
      </Text>
      <ErrorNote error={error} />
      {fetching && !conn && <Loading />}
      {conn && conn.totalCount === 0 && (
        <Text size="sm" c="dimmed">
          No entitlements yet (POST /v1/entitlements).
        </Text>
      )}
      {conn && conn.totalCount > 0 && (
        <>
          <Table aria-label="Entitlements" fz="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Lookup key</Table.Th>
                <Table.Th>Products</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {conn.edges.map(({ node: e }) => (
                <Table.Tr key={e.id}>
                  <Table.Td>
                    {e.name}
                    {e.description && (
                      <Text size="xs" c="dimmed">
                        {e.description}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Code>{e.lookupKey}</Code>
                  </Table.Td>
                  <Table.Td>{e.productIds.length}</Table.Td>
                  <Table.Td>
                    <Day at={e.createdAt} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <PagerControls pager={pager} pageInfo={conn.pageInfo} totalCount={conn.totalCount} />
        </>
      )}
    </Card>
  );
}
