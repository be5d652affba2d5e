import { Card, Text } from '@mantine/core';
import { CompositeChart } from '@mantine/charts';
import { formatCompactMoney } from '../../../lib/compact-money';
import { formatMoney } from '../../../lib/money';

/** Twelve calendar months before an instant, as a window's start. */
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

interface Point {
  periodStart: string;
  mrr: number;
  new: number;
  expansion: number;
  reactivation: number;
  contraction: number;
  churn: number;
}

/**
 * MRR movements per month (gains stacked up, losses stacked down) with the MRR line on its own axis. The series comes
 * with the overview's first request (one round trip for the first screen).
 */
export function MrrMovementsChart({ series, currency }: { series: Point[]; currency: string }) {
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
    </Card>
  );
}
