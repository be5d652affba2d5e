import { useState } from 'react';
import { Alert, Badge, Button, Card, Code, Group, Modal, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../../gql';
import { formatMoney, formatPercent } from '../../../lib/money';
import { ErrorNote, Loading, Money, PageTitle, StatusBadge, When } from '../../../lib/ui';

const ExperimentQuery = graphql(`
  query GrowthExperiment($id: ID!) {
    experiment(id: $id) {
      id
      name
      status
      targeting
      createdAt
      startedAt
      stoppedAt
    }
    experimentResults(id: $id) {
      experimentId
      currency
      totalVisitors
      winnerVariantId
      sampleRatioMismatch {
        chiSquare
        pValue
        degreesOfFreedom
        warning
      }
      variants {
        variantId
        key
        name
        isControl
        isWinner
        trafficPercent
        visitors
        conversions
        conversionRate
        trialStarts
        revenue
        mrr
        chanceToWin
        mrrLift {
          expected
          ciLow
          ciHigh
        }
      }
    }
  }
`);

const StartExperiment = graphql(`
  mutation GrowthStartExperiment($id: ID!) {
    startExperiment(id: $id) {
      id
      status
      startedAt
    }
  }
`);

const StopExperiment = graphql(`
  mutation GrowthStopExperiment($id: ID!) {
    stopExperiment(id: $id) {
      id
      status
      stoppedAt
    }
  }
`);

/** MRR per visitor in subunits (a mean, so fractional), shown as money of whole subunits. */
const perVisitor = (v: number, currency: string) => formatMoney(Math.round(v), currency);

/**
 * One experiment: its state with Start and Stop, and its results per variant (visitors, conversions, exact chance to
 * win, MRR lift per visitor with its 95% interval, the winner) and the sample-ratio check (docs/growth.md).
 */
export function ExperimentDetail({ id, onBack }: { id: string; onBack: () => void }) {
  const [{ data, error, fetching }, reexecute] = useQuery({ query: ExperimentQuery, variables: { id } });
  const [started, start] = useMutation(StartExperiment);
  const [stopped, stop] = useMutation(StopExperiment);
  const [confirmStop, setConfirmStop] = useState(false);
  const e = data?.experiment;
  const r = data?.experimentResults;

  const refresh = () => reexecute({ requestPolicy: 'network-only' });
  const onStart = async () => {
    await start({ id });
    refresh();
  };
  const onStop = async () => {
    setConfirmStop(false);
    await stop({ id });
    refresh();
  };

  return (
    <Stack>
      <PageTitle
        right={
          <Button variant="default" size="xs" onClick={onBack}>
            Back to growth
          </Button>
        }
      >
        Experiment{e ? `: ${e.name}` : ''}
      </PageTitle>
      <ErrorNote error={error} />
      {fetching && !data && <Loading />}
      {e && (
        <Card withBorder>
          <Group justify="space-between">
            <Group gap="sm">
              <StatusBadge status={e.status} />
              <Text size="sm">
                Started <When at={e.startedAt} /> · Stopped <When at={e.stoppedAt} />
              </Text>
            </Group>
            <Group gap="xs">
              {/* Both stay enabled: a refusal from the service (not a draft, not running) is shown in its words. */}
              <Button
                size="xs"
                variant={e.status === 'DRAFT' ? 'filled' : 'default'}
                onClick={onStart}
                loading={started.fetching}
              >
                Start experiment
              </Button>
              <Button
                size="xs"
                color="red"
                variant={e.status === 'RUNNING' ? 'light' : 'default'}
                onClick={() => setConfirmStop(true)}
                loading={stopped.fetching}
              >
                Stop experiment
              </Button>
            </Group>
          </Group>
          <Text size="sm" mt="xs">
            Targeting: <Code>{JSON.stringify(e.targeting)}</Code>
          </Text>
          <ErrorNote error={started.error} title="The experiment was not started" />
          <ErrorNote error={stopped.error} title="The experiment was not stopped" />
        </Card>
      )}
      <Modal opened={confirmStop} onClose={() => setConfirmStop(false)} title="Stop this experiment?">
        <Text size="sm" mb="md">
          A stopped experiment is final: nobody is served it any more and it cannot be started again. Its results stay.
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={() => setConfirmStop(false)}>
            Keep running
          </Button>
          <Button color="red" onClick={onStop}>
            Stop now
          </Button>
        </Group>
      </Modal>
      {r && (
        <Card withBorder data-testid="experiment-results">
          <Group justify="space-between" mb="sm">
            <Text fw={600} component="h2" fz="lg" m={0}>
              Results
            </Text>
            <Text size="sm" c="dimmed">
              {r.totalVisitors} visitors · revenue and MRR in {r.currency}
            </Text>
          </Group>
          {r.winnerVariantId ? (
            <Alert color={r.sampleRatioMismatch.warning ? 'yellow' : 'teal'} mb="sm" title="Winner">
              {r.variants.find((v) => v.variantId === r.winnerVariantId)?.name} beats the control with at least 95%
              chance.
              {r.sampleRatioMismatch.warning && ' The sample-ratio check below fails, so treat this winner with doubt.'}
            </Alert>
          ) : (
            <Text size="sm" c="dimmed" mb="sm">
              No winner yet (a treatment needs a 95% chance to win and 100 visitors in it and in the control).
            </Text>
          )}
          <ScrollArea>
            <Table aria-label="Results by variant" fz="sm" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Variant</Table.Th>
                  <Table.Th>Traffic</Table.Th>
                  <Table.Th>Visitors</Table.Th>
                  <Table.Th>Conversions</Table.Th>
                  <Table.Th>Conversion rate</Table.Th>
                  <Table.Th>Trial starts</Table.Th>
                  <Table.Th>Revenue</Table.Th>
                  <Table.Th>MRR</Table.Th>
                  <Table.Th>Chance to win</Table.Th>
                  <Table.Th>MRR lift per visitor (95% interval)</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {r.variants.map((v) => (
                  <Table.Tr key={v.variantId} data-variant={v.key}>
                    <Table.Th scope="row" fw={500}>
                      <Group gap={4}>
                        {v.name}
                        {v.isControl && (
                          <Badge size="xs" variant="light" color="gray">
                            control
                          </Badge>
                        )}
                        {v.isWinner && (
                          <Badge size="xs" color="teal">
                            winner
                          </Badge>
                        )}
                      </Group>
                    </Table.Th>
                    <Table.Td>{v.trafficPercent}%</Table.Td>
                    <Table.Td>{v.visitors}</Table.Td>
                    <Table.Td>{v.conversions}</Table.Td>
                    <Table.Td>{formatPercent(v.conversionRate)}</Table.Td>
                    <Table.Td>{v.trialStarts}</Table.Td>
                    <Table.Td>
                      <Money amount={v.revenue} currency={r.currency} />
                    </Table.Td>
                    <Table.Td>
                      <Money amount={v.mrr} currency={r.currency} />
                    </Table.Td>
                    <Table.Td data-testid={`chance-${v.key}`}>
                      {v.isControl ? 'control' : formatPercent(v.chanceToWin)}
                    </Table.Td>
                    <Table.Td>
                      {v.mrrLift
                        ? `${perVisitor(v.mrrLift.expected, r.currency)} (${perVisitor(v.mrrLift.ciLow, r.currency)} to ${perVisitor(v.mrrLift.ciHigh, r.currency)})`
                        : v.isControl
                          ? '—'
                          : 'needs 2 visitors per arm'}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollArea>
          <Stack gap={4} mt="md" data-testid="sample-ratio">
            <Text fw={600}>Sample-ratio check</Text>
            {r.sampleRatioMismatch.warning ? (
              <Alert color="red" role="alert" title="Sample-ratio mismatch">
                Visitors per variant do not match the configured split (χ² ={' '}
                {r.sampleRatioMismatch.chiSquare.toFixed(2)}, {r.sampleRatioMismatch.degreesOfFreedom} degrees of
                freedom, p = {r.sampleRatioMismatch.pValue.toExponential(2)}
                ). Assignment may be broken: do not trust these results until it is explained.
              </Alert>
            ) : (
              <Text size="sm">
                Visitors match the configured split (χ² = {r.sampleRatioMismatch.chiSquare.toFixed(2)}, p ={' '}
                {r.sampleRatioMismatch.pValue.toFixed(3)}).
              </Text>
            )}
          </Stack>
        </Card>
      )}
    </Stack>
  );
}
