import { useState } from 'react';
import { Alert, Button, Card, Modal, TextInput, Stack, Text } from '@mantine/core';
import { useMutation } from 'urql';
import { graphql } from '../../../gql';
import { reloadWithStoredKey, storeRolledKey } from '../../../lib/key-update';
import { When } from '../../../lib/ui';
import { ConfirmModal } from './ConfirmModal';
import { SecretField } from './SecretField';
import { currentMode } from './mode';

const RollKey = graphql(`
  mutation DevelopersRollApiKey($graceSeconds: Int!) {
    rollApiKey(graceSeconds: $graceSeconds) {
      secretKey
      last4
      mode
      previousKeyExpiresAt
    }
  }
`);

/** "3600" -> "1 hour": the grace period in words. */
function inWords(seconds: number): string {
  if (seconds <= 0) return 'at once';
  const parts: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  const out: string[] = [];
  let left = seconds;
  for (const [size, name] of parts) {
    const n = Math.floor(left / size);
    if (n) out.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    left -= n * size;
  }
  return `after ${out.join(' ')}`;
}

/**
 * Rolls this mode's secret key. The new key is shown once and at once replaces the one this browser keeps, so the
 * dashboard goes on working when the old key stops; the page then reloads on the new key.
 */
export function RollKeyPanel() {
  const mode = currentMode();
  const [grace, setGrace] = useState<number>(3600);
  const [asking, setAsking] = useState(false);
  const [rolled, roll] = useMutation(RollKey);
  const [fresh, setFresh] = useState<{ secretKey: string; previousKeyExpiresAt: string } | null>(null);
  const valid = Number.isInteger(grace) && grace >= 0 && grace <= 604_800;

  return (
    <Card withBorder>
      <Stack>
        <Text fw={600}>API key ({mode} mode)</Text>
        <Text size="sm">
          Rolling issues a new secret key for {mode} mode. The current key keeps working for the grace period you
          choose, then stops: update your servers with the new key before then.
        </Text>
        <TextInput
          type="number"
          label="Grace period (seconds)"
          description={`The current key stops ${inWords(grace)} (at most 7 days: 604800 seconds).`}
          value={String(grace)}
          onChange={(e) => setGrace(Number(e.currentTarget.value) || 0)}
          min={0}
          max={604_800}
          step={1}
          w={320}
          error={valid ? null : 'Between 0 and 604800 seconds.'}
        />
        <div>
          <Button color="orange" disabled={!valid} onClick={() => setAsking(true)}>
            Roll API key
          </Button>
        </div>
      </Stack>
      <ConfirmModal
        opened={asking}
        title={`Roll the ${mode} secret key?`}
        confirmLabel="Roll key now"
        color="orange"
        busy={rolled.fetching}
        error={rolled.error}
        onClose={() => setAsking(false)}
        onConfirm={async () => {
          const r = await roll({ graceSeconds: grace });
          const k = r.data?.rollApiKey;
          if (k) {
            // Stored before anything else can fail: the old key may already be refused.
            storeRolledKey(k.secretKey);
            setAsking(false);
            setFresh({ secretKey: k.secretKey, previousKeyExpiresAt: k.previousKeyExpiresAt });
          }
        }}
      >
        <Text size="sm">
          A new {mode} secret key is issued and shown once. The current key stops working {inWords(grace)}: every server
          or script using it is refused from then on. This dashboard switches to the new key.
        </Text>
      </ConfirmModal>
      <Modal
        opened={!!fresh}
        onClose={reloadWithStoredKey}
        title="Your new secret key"
        centered
        size="lg"
        closeOnClickOutside={false}
      >
        {fresh && (
          <Stack>
            <Alert color="yellow">
              This key is shown only now. Copy it into your servers&apos; configuration. The previous key stops working
              at <When at={fresh.previousKeyExpiresAt} />.
            </Alert>
            <SecretField label="New secret key" value={fresh.secretKey} />
            <Button onClick={reloadWithStoredKey}>Continue with the new key</Button>
          </Stack>
        )}
      </Modal>
    </Card>
  );
}
