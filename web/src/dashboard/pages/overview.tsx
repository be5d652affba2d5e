import { Card, SimpleGrid, Stack, Text } from '@mantine/core';
import { AreaChart } from '@mantine/charts';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { formatMoney } from '../../lib/money';
import { ErrorNote, Loading, PageTitle } from '../../lib/ui';

const OverviewQuery = graphql(`
  query DashboardOverview {
    mrr(interval: MONTH) {
      currency
      mrr
      arr
      activeSubscriptions
      payingCustomers
      arpu
      asOf
      movements {
        new
        expansion
        reactivation
        contraction
        churn
        netNew
      }
      series {
        periodEnd
        mrr
        new
        expansion
        reactivation
        contraction
        churn
      }
    }
  }
`);

export const Stat = ({ label, value, testId }: { label: string; value: string; testId?: string }) => (
  <Card withBorder padding="md">
    <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
      {label}
    </Text>
    <Text fz="xl" fw={700} data-testid={testId}>
      {value}
    </Text>
  </Card>
);

export function Overview() {
  const [{ data, error, fetching }] = useQuery({ query: OverviewQuery });
  const mrr = data?.mrr;
  return (
    <Stack>
      <PageTitle>Overview</PageTitle>
      <ErrorNote error={error} />
      {fetching && !mrr && <Loading />}
      {mrr && (
        <>
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
            <Stat label="MRR" value={formatMoney(mrr.mrr, mrr.currency)} testId="overview-mrr" />
            <Stat label="ARR" value={formatMoney(mrr.arr, mrr.currency)} testId="overview-arr" />
            <Stat label="Active subscriptions" value={String(mrr.activeSubscriptions)} testId="overview-active" />
            <Stat label="ARPU" value={formatMoney(mrr.arpu, mrr.currency)} />
          </SimpleGrid>
          <Card withBorder>
            <Text fw={600} mb="sm">
              MRR over time
            </Text>
            <AreaChart
              h={260}
              data={mrr.series.map((p) => ({ month: p.periodEnd.slice(0, 7), MRR: p.mrr }))}
              dataKey="month"
              series={[{ name: 'MRR', color: 'indigo.6' }]}
              valueFormatter={(v) => formatMoney(v, mrr.currency)}
              withDots={false}
            />
          </Card>
        </>
      )}
    </Stack>
  );
}
