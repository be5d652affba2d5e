import type { ReactNode } from 'react';
import { Button, Group, Modal, Stack } from '@mantine/core';
import type { CombinedError } from 'urql';
import { ErrorNote } from '../../../lib/ui';

/** Asks before a destructive or security-relevant action; the action's error stays in the dialog. */
export function ConfirmModal(props: {
  opened: boolean;
  title: string;
  confirmLabel: string;
  color?: string;
  busy?: boolean;
  error?: CombinedError | null;
  onConfirm: () => void;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <Modal opened={props.opened} onClose={props.onClose} title={props.title} centered>
      <Stack>
        {props.children}
        <ErrorNote error={props.error} />
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose}>
            Keep it
          </Button>
          <Button color={props.color ?? 'red'} loading={props.busy} onClick={props.onConfirm}>
            {props.confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
