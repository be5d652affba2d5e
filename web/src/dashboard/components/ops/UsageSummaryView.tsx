import { Alert, Card, Group, Stack, Table, Text } from '@mantine/core';
import { BarChart } from '@mantine/charts';
import { useQuery } from 'urql';
import { graphql } from '../../../gql';
import { formatMoney } from '../../../lib/money';
import { Day, ErrorNote, Loading, StatusBadge } from '../../../lib/ui';
import { rateInMajorUnits, usageAmount } from './usage-amount';

const UsageOfSubscription = graphql(`
  query UsageSummaryOfSubscription($id: ID!) {
    subscription(id: $id) {
      id
      status
      currency
      planId
      trialStart
      trialEnd
    }
    usageSummary(subscriptionId: $id) {
      subscriptionId
      aggregations {
        id
        billingPeriodStart
        billingPeriodEnd
        eventType
        unit
        eventCount
        totalQuantity
        totalQuantityDecimal
      }
    }
  }
`);

const UsageRatesOfPlan = graphql(`
  query UsagePlanRates($planId: ID!) {
    plan(id: $planId) {
      id
      name
      usageRates {
        id
        eventType
        currency
        unitAmountDecimal
      }
    }
  }
`);

const periodLabel = (start: string) =>
  new Date(start).toLocaleDateString('en-IN', { day: 'numeric', month: 'short', year: 'numeric' });

/**
 * A subscription's usage per billing period and event type, priced at its plan's current rates in the
 * subscription's currency (docs/usage.md), with quantity per period as a bar chart.
 */
export function UsageSummaryView({ subscriptionId }: { subscriptionId: string }) {
  const [{ data, error, fetching }] = useQuery({ query: UsageOfSubscription, variables: { id: subscriptionId } });
  const sub = data?.subscription;
  const [rates] = useQuery({
    query: UsageRatesOfPlan,
    variables: { planId: sub?.planId ?? '' },
    pause: !sub,
  });
  if (error) return <ErrorNote error={error} title="The usage could not be read" />;
  if (fetching && !data) return <Loading />;
  if (!sub || !data) return null;

  const aggregations = data.usageSummary.aggregations;
  const rateOf = (eventType: string) =>
    rates.data?.plan.usageRates.find((r) => r.eventType === eventType && r.currency === sub.currency);
  // Usage counted during a trial is never billed: the trial is its own period.
  const inTrial = (start: string) =>
    !!sub.trialStart && !!sub.trialEnd && start >= sub.trialStart && start < sub.trialEnd;

  // Oldest period first for the chart, one bar series per event type.
  const eventTypes = [...new Set(aggregations.map((a) => a.eventType))].sort();
  const byPeriod = new Map<string, Record<string, string | number>>();
  for (const a of [...aggregations].reverse()) {
    const row = byPeriod.get(a.billingPeriodStart) ?? { period: periodLabel(a.billingPeriodStart) };
    row[a.eventType] = a.totalQuantity;
    byPeriod.set(a.billingPeriodStart, row);
  }
  const colors = ['indigo.6', 'teal.6', 'orange.6', 'grape.6', 'cyan.6', 'red.6'];

  return (
    <Stack>
      <Group gap="sm">
        <Text fw={600}>Subscription</Text>
        <Text ff="monospace" data-testid="usage-subscription">
          {sub.id}
        </Text>
        <StatusBadge status={sub.status} />
        {rates.data && (
          <Text size="sm" c="dimmed">
            Plan {rates.data.plan.name}
          </Text>
        )}
      </Group>
      <ErrorNote error={rates.error} title="The plan's usage rates could not be read" />
      {aggregations.length === 0 ? (
        <Alert color="gray">No usage has been reported for this subscription.</Alert>
      ) : (
        <>
          <Card withBorder>
            <Text fw={600} mb="sm">
              Quantity per billing period
            </Text>
            <BarChart
              h={220}
              data={[...byPeriod.values()]}
              dataKey="period"
              series={eventTypes.map((t, i) => ({ name: t, color: colors[i % colors.length] }))}
              withLegend
            />
          </Card>
          <Table aria-label="Usage per billing period" striped withTableBorder>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Billing period</Table.Th>
                <Table.Th>Event type</Table.Th>
                <Table.Th>Events</Table.Th>
                <Table.Th>Quantity</Table.Th>
                <Table.Th>Rate</Table.Th>
                <Table.Th>Amount</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {aggregations.map((a) => {
                const rate = rateOf(a.eventType);
                const trial = inTrial(a.billingPeriodStart);
                return (
                  <Table.Tr key={a.id} data-testid="usage-row">
                    <Table.Td>
                      <Day at={a.billingPeriodStart} /> – <Day at={a.billingPeriodEnd} />
                    </Table.Td>
                    <Table.Td ff="monospace">{a.eventType}</Table.Td>
                    <Table.Td>{a.eventCount}</Table.Td>
                    <Table.Td data-testid="usage-quantity">
                      {a.totalQuantityDecimal} {a.unit}
                    </Table.Td>
                    <Table.Td>
                      {rate
                        ? `${rateInMajorUnits(rate.unitAmountDecimal, sub.currency)} per ${a.unit}`
                        : rates.fetching
                          ? '…'
                          : 'no rate'}
                    </Table.Td>
                    <Table.Td data-testid="usage-amount">
                      {trial
                        ? 'not billed (trial)'
                        : rate
                          ? formatMoney(usageAmount(a.totalQuantityDecimal, rate.unitAmountDecimal), sub.currency)
                          : 'not billed'}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
          <Text size="xs" c="dimmed">
            Amounts are quantity × the plan&apos;s current rate in {sub.currency}, rounded to a whole subunit, before
            GST. Usage is billed in arrears when a period closes; usage without a rate, or counted during a free trial,
            is not billed.
          </Text>
        </>
      )}
    </Stack>
  );
}
