import { Card, ScrollArea, Table, Text } from '@mantine/core';
import { useQuery } from 'urql';
import { graphql } from '../../../gql';
import { formatPercent } from '../../../lib/money';
import { ErrorNote, Loading } from '../../../lib/ui';

const CohortsQuery = graphql(`
  query OverviewCohorts($currency: String!) {
    cohorts(granularity: MONTH, currency: $currency) {
      asOf
      granularity
      cohorts {
        cohortStart
        customers
        retention {
          period
          activeCustomers
          rate
        }
      }
    }
  }
`);

/** A cell's background: white at 0% to deep teal at 100%, text kept readable on both. */
function shade(rate: number): { background: string; color: string } {
  const pct = Math.round(rate * 100);
  return {
    background: `color-mix(in srgb, var(--mantine-color-teal-7) ${pct}%, var(--mantine-color-body))`,
    color: pct > 55 ? 'white' : 'var(--mantine-color-text)',
  };
}

const monthOf = (iso: string) =>
  new Date(iso).toLocaleDateString('en-IN', { month: 'short', year: 'numeric', timeZone: 'UTC' });

/**
 * Customer retention by activation month: one row per cohort, one column per month since, each cell the share of the
 * cohort still paying at that period's end (coloured by it).
 */
export function CohortRetention({ currency }: { currency: string }) {
  const [{ data, error, fetching }] = useQuery({ query: CohortsQuery, variables: { currency } });
  const cohorts = data?.cohorts.cohorts ?? [];
  const periods = Math.max(0, ...cohorts.map((c) => c.retention.length));
  return (
    <Card withBorder data-testid="overview-cohorts">
      <Text fw={600} mb="sm">
        Cohort retention (customers still paying, by month since first payment)
      </Text>
      <ErrorNote error={error} />
      {fetching && !data && <Loading />}
      {data && (
        <ScrollArea>
          <Table withTableBorder withColumnBorders fz="xs" aria-label="Cohort retention">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Cohort</Table.Th>
                <Table.Th>Customers</Table.Th>
                {Array.from({ length: periods }, (_, i) => (
                  <Table.Th key={i} ta="center">
                    M{i}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {cohorts.map((c) => (
                <Table.Tr key={c.cohortStart}>
                  <Table.Th scope="row" fw={500}>
                    {monthOf(c.cohortStart)}
                  </Table.Th>
                  <Table.Td>{c.customers}</Table.Td>
                  {Array.from({ length: periods }, (_, i) => {
                    const cell = c.retention[i];
                    if (!cell) return <Table.Td key={i} />;
                    if (cell.rate === null || cell.rate === undefined)
                      return (
                        <Table.Td key={i} ta="center" c="dimmed">
                          —
                        </Table.Td>
                      );
                    return (
                      <Table.Td
                        key={i}
                        ta="center"
                        style={shade(cell.rate)}
                        title={`${cell.activeCustomers} of ${c.customers}`}
                        data-rate={cell.rate}
                      >
                        {formatPercent(cell.rate)}
                      </Table.Td>
                    );
                  })}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollArea>
      )}
    </Card>
  );
}
