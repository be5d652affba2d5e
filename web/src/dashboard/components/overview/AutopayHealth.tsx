import { Card, Group, Progress, SimpleGrid, Table, Text } from '@mantine/core';
import { useQuery } from 'urql';
import { graphql } from '../../../gql';
import { formatPercent } from '../../../lib/money';
import { ErrorNote, Loading } from '../../../lib/ui';

const AutopayQuery = graphql(`
  query OverviewAutopay {
    autopay {
      from
      to
      attempts
      authorized
      failed
      successRate
      byMethod {
        method
        attempts
        authorized
        successRate
      }
      banks {
        bank
        attempts
        authorized
        successRate
      }
      failureReasons {
        reason
        count
      }
    }
  }
`);

const METHOD_LABEL: Record<string, string> = {
  UPI: 'UPI autopay',
  CARD: 'Card',
  EMANDATE: 'e-mandate',
  UNKNOWN: 'Unknown',
};

const rateColor = (rate: number) => (rate >= 0.9 ? 'teal' : rate >= 0.7 ? 'yellow' : 'red');

function RateRows({ rows }: { rows: { name: string; attempts: number; authorized: number; successRate: number }[] }) {
  return (
    <Table.Tbody>
      {rows.map((r) => (
        <Table.Tr key={r.name}>
          <Table.Th scope="row" fw={500}>
            {r.name}
          </Table.Th>
          <Table.Td>{r.attempts}</Table.Td>
          <Table.Td>{r.authorized}</Table.Td>
          <Table.Td miw={140}>
            <Group gap="xs" wrap="nowrap">
              <Progress value={r.successRate * 100} color={rateColor(r.successRate)} w={70} aria-hidden />
              <Text size="sm">{formatPercent(r.successRate)}</Text>
            </Group>
          </Table.Td>
        </Table.Tr>
      ))}
    </Table.Tbody>
  );
}

function RateTable({
  label,
  first,
  rows,
}: {
  label: string;
  first: string;
  rows: { name: string; attempts: number; authorized: number; successRate: number }[];
}) {
  return (
    <Table aria-label={label} fz="sm">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{first}</Table.Th>
          <Table.Th>Attempts</Table.Th>
          <Table.Th>Authorised</Table.Th>
          <Table.Th>Success</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <RateRows rows={rows} />
    </Table>
  );
}

/** Mandate authorisation over the last 30 days of the merchant's clock: by payment method, by bank, and why failed. */
export function AutopayHealth() {
  const [{ data, error, fetching }] = useQuery({ query: AutopayQuery });
  const a = data?.autopay;
  return (
    <Card withBorder data-testid="overview-autopay">
      <Text fw={600}>Autopay health (last 30 days)</Text>
      <ErrorNote error={error} />
      {fetching && !a && <Loading />}
      {a && (
        <>
          <Text size="sm" c="dimmed" mb="sm">
            {a.attempts === 0
              ? 'No mandate attempts in this window.'
              : `${a.authorized} of ${a.attempts} mandate attempts authorised (${formatPercent(a.successRate)}), ${a.failed} failed.`}
          </Text>
          {a.attempts > 0 && (
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <RateTable
                label="Autopay by method"
                first="Method"
                rows={a.byMethod.map((m) => ({ ...m, name: METHOD_LABEL[m.method] ?? m.method }))}
              />
              <RateTable
                label="Autopay by bank"
                first="Bank"
                rows={a.banks.map((b) => ({ ...b, name: b.bank ?? 'Not named' }))}
              />
            </SimpleGrid>
          )}
          {a.failureReasons.length > 0 && (
            <Text size="sm" mt="sm">
              Failures: {a.failureReasons.map((f) => `${f.reason.replace(/_/g, ' ')} (${f.count})`).join(', ')}
            </Text>
          )}
        </>
      )}
    </Card>
  );
}
