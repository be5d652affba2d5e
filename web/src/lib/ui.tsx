import { useState, type ReactNode } from 'react';
import { Alert, Badge, Button, Group, Loader, Text } from '@mantine/core';
import type { CombinedError } from 'urql';
import { errorText } from './errors';
import { formatMoney } from './money';

/** An API error in words (lib/errors.ts); nothing when there is none. */
export function ErrorNote({
  error,
  title = 'The request failed',
}: {
  error?: CombinedError | Error | null;
  title?: string;
}) {
  const text = errorText(error);
  if (!text) return null;
  return (
    <Alert color="red" title={title} role="alert" style={{ whiteSpace: 'pre-line' }}>
      {text}
    </Alert>
  );
}

export const Money = ({ amount, currency }: { amount: number; currency: string }) => (
  <span className="money">{formatMoney(amount, currency)}</span>
);

export const When = ({ at }: { at?: string | null }) =>
  at ? (
    <span title={at}>{new Date(at).toLocaleString('en-IN', { dateStyle: 'medium', timeStyle: 'short' })}</span>
  ) : (
    <>—</>
  );

export const Day = ({ at }: { at?: string | null }) =>
  at ? <span title={at}>{new Date(at).toLocaleDateString('en-IN', { dateStyle: 'medium' })}</span> : <>—</>;

const STATUS_COLORS: Record<string, string> = {
  ACTIVE: 'green',
  TRIALING: 'cyan',
  PAST_DUE: 'orange',
  PAUSED: 'gray',
  HALTED: 'red',
  CANCELLED: 'dark',
  COMPLETED: 'dark',
  CREATED: 'blue',
  SUCCEEDED: 'green',
  PAID: 'green',
  FAILED: 'red',
  PENDING: 'yellow',
  OPEN: 'orange',
  REFUNDED: 'grape',
  PARTIALLY_REFUNDED: 'grape',
  RUNNING: 'green',
  DRAFT: 'gray',
  STOPPED: 'dark',
};

export const StatusBadge = ({ status }: { status: string }) => (
  <Badge color={STATUS_COLORS[status] ?? 'gray'} variant="light" data-status={status}>
    {status.toLowerCase().replace(/_/g, ' ')}
  </Badge>
);

export const Loading = ({ label = 'Loading…' }: { label?: string }) => (
  <Group gap="xs">
    <Loader size="sm" />
    <Text size="sm" c="dimmed">
      {label}
    </Text>
  </Group>
);

/**
 * Server-side paging over a Relay connection: the page's `after` cursor, with the cursors of earlier pages kept so
 * "Previous" goes back without the server counting offsets.
 */
export function usePager() {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  const after = stack[stack.length - 1];
  return {
    after,
    page: stack.length,
    next: (endCursor: string | null | undefined) => endCursor && setStack((s) => [...s, endCursor]),
    previous: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    reset: () => setStack([null]),
  };
}

export function PagerControls({
  pager,
  pageInfo,
  totalCount,
}: {
  pager: ReturnType<typeof usePager>;
  pageInfo?: { hasNextPage: boolean; endCursor?: string | null } | null;
  totalCount?: number;
}) {
  return (
    <Group justify="space-between" mt="sm">
      <Text size="sm" c="dimmed">
        Page {pager.page}
        {totalCount !== undefined ? ` · ${totalCount} in all` : ''}
      </Text>
      <Group gap="xs">
        <Button size="xs" variant="default" disabled={pager.page === 1} onClick={pager.previous}>
          Previous
        </Button>
        <Button
          size="xs"
          variant="default"
          disabled={!pageInfo?.hasNextPage}
          onClick={() => pager.next(pageInfo?.endCursor)}
        >
          Next
        </Button>
      </Group>
    </Group>
  );
}

export const PageTitle = ({ children, right }: { children: ReactNode; right?: ReactNode }) => (
  <Group justify="space-between" mb="md">
    <Text component="h1" fw={700} fz="xl" m={0}>
      {children}
    </Text>
    {right}
  </Group>
);
