import { Card, Text } from '@mantine/core';
import { CompositeChart } from '@mantine/charts';
import { useQuery } from 'urql';
import { graphql } from '../../../gql';
import { formatCompactMoney } from '../../../lib/compact-money';
import { formatMoney } from '../../../lib/money';
import { ErrorNote, Loading } from '../../../lib/ui';

const MovementsQuery = graphql(`
  query OverviewMrrMovements($from: String!, $to: String!, $currency: String!) {
    mrr(interval: MONTH, from: $from, to: $to, currency: $currency) {
      currency
      series {
        periodStart
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

/** Twelve calendar months back from the merchant's now (the test clock in test mode), as the window's start. */
export function yearBefore(asOf: string): string {
  const d = new Date(asOf);
  d.setUTCFullYear(d.getUTCFullYear() - 1);
  return d.toISOString();
}

const SERIES = [
  { name: 'New', color: 'teal.6', type: 'bar' as const },
  { name: 'Expansion', color: 'green.4', type: 'bar' as const },
  { name: 'Reactivation', color: 'cyan.5', type: 'bar' as const },
  { name: 'Contraction', color: 'orange.5', type: 'bar' as const },
  { name: 'Churn', color: 'red.6', type: 'bar' as const },
  { name: 'MRR', color: 'indigo.7', type: 'line' as const, yAxisId: 'right' },
];

/**
 * MRR movements per month (gains stacked up, losses stacked down) with the MRR line on its own axis, over the year
 * ending at `asOf`. Loaded after the first screen: it is the heaviest of the overview's MRR reads.
 */
export function MrrMovementsChart({ asOf, currency }: { asOf: string; currency: string }) {
  const [{ data, error, fetching }] = useQuery({
    query: MovementsQuery,
    variables: { from: yearBefore(asOf), to: asOf, currency },
  });
  const series = data?.mrr.series ?? [];
  const rows = series.map((p) => ({
    month: p.periodStart.slice(0, 7),
    New: p.new,
    Expansion: p.expansion,
    Reactivation: p.reactivation,
    // Losses arrive as positive amounts; drawn below the axis.
    Contraction: -p.contraction,
    Churn: -p.churn,
    MRR: p.mrr,
  }));
  const short = (v: number) => formatCompactMoney(v, currency);
  return (
    <Card withBorder data-testid="overview-movements">
      <Text fw={600} mb="sm">
        MRR movements by month
      </Text>
      <ErrorNote error={error} />
      {fetching && !data && <Loading />}
      {data && (
        <CompositeChart
          h={300}
          data={rows}
          dataKey="month"
          series={SERIES}
          withLegend
          withDots={false}
          curveType="linear"
          withRightYAxis
          maxBarWidth={36}
          // Full amounts in the tooltip; the axes get compact labels that fit their width.
          valueFormatter={(v) => formatMoney(v, currency)}
          yAxisProps={{ width: 72, tickFormatter: short }}
          rightYAxisProps={{ width: 72, tickFormatter: short }}
          barProps={{ stackId: 'movements' }}
          composedChartProps={{ stackOffset: 'sign' }}
        />
      )}
    </Card>
  );
}
