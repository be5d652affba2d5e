import { useEffect, useState, type ReactNode } from 'react';
import { Badge, Card, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { formatMoney, formatPercent } from '../../lib/money';
import { ErrorNote, Loading, PageTitle } from '../../lib/ui';
import { AutopayHealth } from '../components/overview/AutopayHealth';
import { CohortRetention } from '../components/overview/CohortRetention';
import { MrrMovementsChart, yearBefore } from '../components/overview/MrrMovementsChart';

/**
 * The first screen in one request: several root fields of one document, each with its default window (the 30 days
 * ending at the merchant's now; 90 for LTV), and the monthly MRR series for the chart from a year before the browser's
 * now to the merchant's now (longer when a test clock runs ahead). Cohorts and autopay load after it.
 */
const OverviewQuery = graphql(`
  query DashboardOverview($historyFrom: String!) {
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
    }
    churn {
      currency
      logoChurnRate
      revenueChurnRate
      churnedSubscriptions
      subscriptionsAtStart
      churnedMrr
      contractionMrr
    }
    quickRatio {
      quickRatio
      healthy
    }
    ltv {
      currency
      ltv
      expectedLifetimeMonths
    }
    history: mrr(interval: MONTH, from: $historyFrom) {
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

export const Stat = ({
  label,
  value,
  testId,
  hint,
}: {
  label: string;
  value: string;
  testId?: string;
  hint?: ReactNode;
}) => (
  <Card withBorder padding="md">
    <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
      {label}
    </Text>
    <Text fz="xl" fw={700} data-testid={testId}>
      {value}
    </Text>
    {hint && (
      <Text size="xs" c="dimmed" component="div">
        {hint}
      </Text>
    )}
  </Card>
);

/**
 * True from the first frame after `ready`: the sections below the chart (cohorts, autopay health) ask for their data
 * and draw once the figures and the chart are on screen, instead of competing with them for the main thread.
 */
function useAfterFirstPaint(ready: boolean): boolean {
  const [after, setAfter] = useState(false);
  useEffect(() => {
    if (!ready || after) return;
    let timer = 0;
    const frame = requestAnimationFrame(() => {
      timer = window.setTimeout(() => setAfter(true), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [ready, after]);
  return after;
}

/** A ratio with two decimals, "—" when it is undefined (nothing was lost). */
const ratio = (r: number | null | undefined) => (r === null || r === undefined ? '—' : r.toFixed(2));

export function Overview() {
  const [historyFrom] = useState(() => yearBefore(new Date().toISOString()));
  const [{ data, error, fetching }] = useQuery({ query: OverviewQuery, variables: { historyFrom } });
  const mrr = data?.mrr;
  const churn = data?.churn;
  const quick = data?.quickRatio;
  const ltv = data?.ltv;
  const below = useAfterFirstPaint(Boolean(mrr));
  return (
    <Stack>
      <PageTitle>Overview</PageTitle>
      <ErrorNote error={error} />
      {fetching && !mrr && <Loading />}
      {mrr && churn && quick && ltv && (
        <>
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
            <Stat
              label="MRR"
              value={formatMoney(mrr.mrr, mrr.currency)}
              testId="overview-mrr"
              hint={`Net new (30 days): ${formatMoney(mrr.movements.netNew, mrr.currency)}`}
            />
            <Stat label="ARR" value={formatMoney(mrr.arr, mrr.currency)} testId="overview-arr" />
            <Stat
              label="Active subscriptions"
              value={String(mrr.activeSubscriptions)}
              testId="overview-active"
              hint={`${mrr.payingCustomers} paying customers`}
            />
            <Stat label="ARPU" value={formatMoney(mrr.arpu, mrr.currency)} testId="overview-arpu" />
            <Stat
              label="Logo churn (30 days)"
              value={formatPercent(churn.logoChurnRate)}
              testId="overview-logo-churn"
              hint={`${churn.churnedSubscriptions} of ${churn.subscriptionsAtStart} subscriptions`}
            />
            <Stat
              label="Revenue churn (30 days)"
              value={formatPercent(churn.revenueChurnRate)}
              testId="overview-revenue-churn"
              hint={`${formatMoney(churn.churnedMrr + churn.contractionMrr, churn.currency)} MRR lost`}
            />
            <Stat
              label="Quick ratio (30 days)"
              value={ratio(quick.quickRatio)}
              testId="overview-quick-ratio"
              hint={
                quick.quickRatio === null || quick.quickRatio === undefined ? (
                  'Nothing lost in the window'
                ) : (
                  <Group gap={4}>
                    {quick.healthy ? (
                      <Badge size="xs" color="teal" variant="light">
                        healthy
                      </Badge>
                    ) : (
                      <Badge size="xs" color="orange" variant="light">
                        below 4
                      </Badge>
                    )}
                    gains / losses
                  </Group>
                )
              }
            />
            <Stat
              label="LTV"
              value={ltv.ltv === null || ltv.ltv === undefined ? '—' : formatMoney(ltv.ltv, ltv.currency)}
              testId="overview-ltv"
              hint={
                ltv.expectedLifetimeMonths === null || ltv.expectedLifetimeMonths === undefined
                  ? 'No churn in 90 days: lifetime not bounded'
                  : `Expected lifetime ${ltv.expectedLifetimeMonths.toFixed(1)} months`
              }
            />
          </SimpleGrid>
          <MrrMovementsChart series={data.history.series} currency={data.history.currency} />
          {below && <CohortRetention currency={mrr.currency} />}
          {below && <AutopayHealth />}
        </>
      )}
    </Stack>
  );
}
