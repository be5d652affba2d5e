import { useRef, useState } from 'react';
import { Alert, Button, Card, Group, TextInput, Progress, SegmentedControl, Stack, Text } from '@mantine/core';
import { useClient, useQuery, type CombinedError } from 'urql';
import { graphql } from '../../../gql';
import { ErrorNote, Loading, When } from '../../../lib/ui';

const ClockQuery = graphql(`
  query DevelopersTestClock {
    testClock {
      now
      advanceTarget
      advanceInterruptedAt
    }
  }
`);

const AdvanceClock = graphql(`
  mutation DevelopersAdvanceTestClock($seconds: Int!) {
    advanceTestClock(seconds: $seconds) {
      now
      advanceTarget
      advanceInterruptedAt
    }
  }
`);

const DAY = 86_400;

type Run = { step: number; steps: number; now?: string; stopped?: boolean; done?: boolean };

/** Splits an advance into steps of at most one day: `seconds` -> [86400, 86400, ..., rest]. */
export function daySteps(seconds: number): number[] {
  const steps: number[] = [];
  for (let left = seconds; left > 0; left -= DAY) steps.push(Math.min(DAY, left));
  return steps;
}

/**
 * The merchant's test clock (docs/sandbox.md): its time and any unfinished advance; "Advance" moves it a day per
 * call, so the work due each day runs in order and the page shows how far it got, and Stop ends it between days.
 */
export function TestClockPanel() {
  const client = useClient();
  const [{ data, error, fetching }, reexecute] = useQuery({ query: ClockQuery });
  const [amount, setAmount] = useState<number>(1);
  const [unit, setUnit] = useState<'days' | 'hours'>('days');
  const [run, setRun] = useState<Run | null>(null);
  const [failure, setFailure] = useState<CombinedError | null>(null);
  const stop = useRef(false);
  const clock = data?.testClock;
  const running = !!run && !run.done;
  const valid = Number.isInteger(amount) && amount > 0 && amount <= (unit === 'days' ? 3660 : 87_840);

  const advance = async () => {
    const steps = daySteps(amount * (unit === 'days' ? DAY : 3600));
    stop.current = false;
    setFailure(null);
    setRun({ step: 0, steps: steps.length });
    for (let i = 0; i < steps.length; i++) {
      if (stop.current) {
        setRun((r) => r && { ...r, stopped: true, done: true });
        reexecute({ requestPolicy: 'network-only' });
        return;
      }
      const r = await client
        .mutation(AdvanceClock, { seconds: steps[i] }, { requestPolicy: 'network-only' })
        .toPromise();
      if (r.error || !r.data) {
        setFailure(r.error ?? null);
        setRun((x) => x && { ...x, done: true, stopped: true });
        reexecute({ requestPolicy: 'network-only' });
        return;
      }
      const now = r.data.advanceTestClock.now;
      setRun({ step: i + 1, steps: steps.length, now });
    }
    setRun((r) => r && { ...r, done: true });
    reexecute({ requestPolicy: 'network-only' });
  };

  return (
    <Card withBorder>
      <Stack>
        <Text fw={600}>Test clock</Text>
        <ErrorNote error={error} />
        {fetching && !clock && <Loading />}
        {clock && (
          <Group gap="xs">
            <Text size="sm">Test-mode time:</Text>
            <Text fw={700} data-testid="test-clock-now" data-at={run?.now ?? clock.now}>
              <When at={run?.now ?? clock.now} />
            </Text>
          </Group>
        )}
        {clock?.advanceTarget && !running && (
          <Alert color="yellow" title="An advance did not finish">
            An advance towards <When at={clock.advanceTarget} /> stopped
            {clock.advanceInterruptedAt ? (
              <>
                {' '}
                at <When at={clock.advanceInterruptedAt} />
              </>
            ) : null}
            . The next advance resumes it first.
          </Alert>
        )}
        <Group align="flex-end">
          <TextInput
            type="number"
            label="Advance by"
            value={String(amount)}
            onChange={(e) => setAmount(Number(e.currentTarget.value) || 0)}
            min={1}
            step={1}
            w={140}
            disabled={running}
            error={valid ? null : 'A whole number above 0.'}
          />
          <SegmentedControl
            aria-label="Unit"
            value={unit}
            onChange={(v) => setUnit(v as 'days' | 'hours')}
            data={[
              { label: 'Days', value: 'days' },
              { label: 'Hours', value: 'hours' },
            ]}
            disabled={running}
          />
          <Button onClick={() => void advance()} loading={running} disabled={!valid || !clock}>
            Advance
          </Button>
          {running && (
            <Button
              color="red"
              variant="light"
              onClick={() => {
                stop.current = true;
              }}
            >
              Stop
            </Button>
          )}
        </Group>
        {run && (
          <Stack gap={4}>
            <Progress
              value={run.steps ? (run.step / run.steps) * 100 : 100}
              aria-label="Advance progress"
              animated={running}
            />
            <Text size="sm" data-testid="advance-progress">
              {`day ${run.step} of ${run.steps}`}
              {run.done && !run.stopped && ' · done'}
              {run.done && run.stopped && !failure && ' · stopped'}
            </Text>
          </Stack>
        )}
        <ErrorNote error={failure} title="The advance stopped" />
        <Text size="xs" c="dimmed">
          Each day runs the renewals, retries and other work due that day before the next. Stop takes effect after the
          day in progress.
        </Text>
      </Stack>
    </Card>
  );
}
