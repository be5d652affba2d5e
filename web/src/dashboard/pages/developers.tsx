import { useRef, useState } from 'react';
import { Alert, Button, Card, Code, Group, Modal, Progress, Select, Stack, Text, TextInput } from '@mantine/core';
import { useClient, useMutation, useQuery, type CombinedError } from 'urql';
import { graphql } from '../../gql';
import { loadKeys, saveKeys } from '../../lib/session';
import { ErrorNote, Loading, PageTitle, When } from '../../lib/ui';

const Clock = graphql(`
  query DevelopersClock {
    testClock {
      now
      advanceTarget
      advanceInterruptedAt
    }
  }
`);
const Advance = graphql(`
  mutation DevelopersAdvance($seconds: Int) {
    advanceTestClock(seconds: $seconds) {
      now
      advanceTarget
    }
  }
`);
const RollKey = graphql(`
  mutation DevelopersRollKey($graceSeconds: Int) {
    rollApiKey(graceSeconds: $graceSeconds) {
      secretKey
      mode
      previousKeyExpiresAt
    }
  }
`);

const DAY = 86_400;
const UNITS: Record<string, number> = { days: DAY, hours: 3600 };

export function Developers() {
  const live = loadKeys().mode === 'live';
  return (
    <Stack>
      <PageTitle>Developers</PageTitle>
      <KeyRoll />
      {live ? (
        <Alert color="gray" title="Test clock">
          The test clock exists in test mode only: switch to Test to move time for your test data.
        </Alert>
      ) : (
        <TestClock />
      )}
    </Stack>
  );
}

/**
 * Moves the test clock in steps of at most a day, each its own advanceTestClock call (renewals, dunning and webhooks
 * due in it run), so the page can say how far it got and stop between steps.
 */
function TestClock() {
  const client = useClient();
  const [{ data, error, fetching }, refetch] = useQuery({ query: Clock, requestPolicy: 'network-only' });
  const [amount, setAmount] = useState<number | string>(30);
  const [unit, setUnit] = useState('days');
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [failure, setFailure] = useState<CombinedError | null>(null);
  const stop = useRef(false);
  const advance = async () => {
    const total = Math.round(Number(amount) * UNITS[unit]);
    if (!(total > 0)) return;
    stop.current = false;
    setFailure(null);
    let done = 0;
    setProgress({ done, total });
    while (done < total && !stop.current) {
      const step = Math.min(DAY, total - done);
      const r = await client.mutation(Advance, { seconds: step }).toPromise();
      if (r.error) {
        setFailure(r.error);
        break;
      }
      done += step;
      setProgress({ done, total });
      refetch({ requestPolicy: 'network-only' });
    }
    setProgress((p) => (p ? { ...p } : p));
    refetch({ requestPolicy: 'network-only' });
  };
  const running = progress !== null && progress.done < progress.total && !failure && !stop.current;
  return (
    <Card withBorder>
      <Text fw={600} mb="xs">
        Test clock
      </Text>
      <ErrorNote error={error ?? failure} />
      {fetching && !data && <Loading />}
      {data && (
        <Text size="sm" mb="sm">
          Now:{' '}
          <Text span fw={700} data-testid="clock-now">
            {new Date(data.testClock.now).toISOString()}
          </Text>{' '}
          (<When at={data.testClock.now} />)
          {data.testClock.advanceTarget && (
            <Text size="xs" c="orange">
              An advance to {data.testClock.advanceTarget} is unfinished: the next advance resumes it.
            </Text>
          )}
        </Text>
      )}
      <Group align="flex-end">
        <TextInput
          type="number"
          label="Advance by"
          min={1}
          max={366}
          value={String(amount)}
          onChange={(e) => setAmount(e.currentTarget.value)}
          w={120}
        />
        <Select
          label="Unit"
          value={unit}
          onChange={(v) => setUnit(v ?? 'days')}
          data={[
            { value: 'days', label: 'days' },
            { value: 'hours', label: 'hours' },
          ]}
          w={110}
        />
        <Button onClick={advance} disabled={running}>
          Advance
        </Button>
        {running && (
          <Button variant="default" onClick={() => (stop.current = true)}>
            Stop
          </Button>
        )}
      </Group>
      {progress && (
        <Stack gap={4} mt="sm">
          <Progress value={(progress.done / progress.total) * 100} aria-label="Advance progress" />
          <Text size="xs" data-testid="advance-progress">
            {progress.done >= progress.total
              ? `Done: moved ${fmtSpan(progress.total)}.`
              : `Moved ${fmtSpan(progress.done)} of ${fmtSpan(progress.total)}…`}
          </Text>
        </Stack>
      )}
    </Card>
  );
}

const fmtSpan = (s: number) =>
  s % DAY === 0 ? `${s / DAY} day${s === DAY ? '' : 's'}` : `${(s / 3600).toFixed(1)} hours`;

function KeyRoll() {
  const [asking, setAsking] = useState(false);
  const [grace, setGrace] = useState<number | string>(3600);
  const [rolled, setRolled] = useState<{ key: string; until: string } | null>(null);
  const [state, roll] = useMutation(RollKey);
  return (
    <Card withBorder>
      <Text fw={600} mb="xs">
        API key
      </Text>
      <Text size="sm" mb="sm">
        Rolling makes a new secret key for this mode. The current key keeps working for the grace period you choose,
        then stops.
      </Text>
      {rolled && (
        <Alert color="green" title="New secret key (shown once)" mb="sm">
          <Code data-testid="new-secret-key">{rolled.key}</Code>
          <Text size="xs">The previous key stops at {rolled.until}. This dashboard now uses the new key.</Text>
        </Alert>
      )}
      <ErrorNote error={state.error} />
      <Button variant="default" onClick={() => setAsking(true)}>
        Roll key
      </Button>
      <Modal opened={asking} onClose={() => setAsking(false)} title="Roll the API key?">
        <Stack>
          <Text size="sm">
            Every system that uses the current key must switch to the new one before the grace period ends.
          </Text>
          <TextInput
            type="number"
            label="Grace period (seconds)"
            min={0}
            value={String(grace)}
            onChange={(e) => setGrace(e.currentTarget.value)}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setAsking(false)}>
              Back
            </Button>
            <Button
              color="red"
              loading={state.fetching}
              onClick={async () => {
                const r = await roll({ graceSeconds: Number(grace) || 0 });
                setAsking(false);
                const k = r.data?.rollApiKey;
                if (!k) return;
                const ring = loadKeys();
                // The new key replaces the kept one; the client switches to it on the next page load.
                saveKeys({ ...ring, [ring.mode]: k.secretKey });
                setRolled({ key: k.secretKey, until: k.previousKeyExpiresAt });
              }}
            >
              Roll key
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Card>
  );
}
