import { useState } from 'react';
import { Alert, Button, Center, Paper, PasswordInput, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { demoKeyOfPage } from '../lib/client';
import { modeOfKey, type Mode } from '../lib/session';

/** Asks for the merchant's secret key (pre-filled with the demo test key in the embedded demo setting). */
export function KeyForm(props: {
  mode: Mode;
  refused?: boolean;
  onKey: (key: string, mode: Mode) => void;
  onMode: (m: Mode) => void;
}) {
  const demo = props.mode === 'test' ? demoKeyOfPage() : null;
  const [key, setKey] = useState(demo ?? '');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    const k = key.trim();
    const mode = modeOfKey(k);
    if (!mode) return setProblem('A secret key starts with sk_test_ or sk_live_.');
    props.onKey(k, mode);
  };
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={420} component="form" onSubmit={submit}>
        <Stack>
          <Title order={2}>Cadence dashboard</Title>
          <SegmentedControl
            value={props.mode}
            onChange={(v) => props.onMode(v as Mode)}
            data={[
              { label: 'Test', value: 'test' },
              { label: 'Live', value: 'live' },
            ]}
            aria-label="Mode"
          />
          {props.refused && <Alert color="red">That key was refused. Enter a valid secret key.</Alert>}
          <PasswordInput
            label="API key"
            description={`Your ${props.mode} secret key. It is kept for this browser session only.`}
            value={key}
            onChange={(e) => setKey(e.currentTarget.value)}
            error={problem}
            autoFocus
          />
          {demo && (
            <Text size="xs" c="dimmed">
              Filled in with the demo merchant&apos;s test key.
            </Text>
          )}
          <Button type="submit">Open dashboard</Button>
        </Stack>
      </Paper>
    </Center>
  );
}
