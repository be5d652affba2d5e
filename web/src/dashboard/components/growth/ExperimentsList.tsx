import { Button, Card, Group, SegmentedControl, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../../../gql';
import type { ExperimentStatus } from '../../../gql/graphql';
import { Day, ErrorNote, Loading, PagerControls, StatusBadge, usePager } from '../../../lib/ui';

const ExperimentsQuery = graphql(`
  query GrowthExperiments($first: Int!, $after: String, $status: ExperimentStatus) {
    experiments(first: $first, after: $after, status: $status) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          name
          status
          startedAt
          stoppedAt
          createdAt
          variants {
            id
            key
            trafficPercent
          }
        }
      }
    }
  }
`);

/** Experiments, newest first, filtered by status on the server; "Open" shows one's results. */
export function ExperimentsList({ onOpen }: { onOpen: (id: string) => void }) {
  const pager = usePager();
  const [status, setStatus] = useState<'ALL' | ExperimentStatus>('ALL');
  const [{ data, error, fetching }] = useQuery({
    query: ExperimentsQuery,
    variables: { first: 10, after: pager.after, status: status === 'ALL' ? null : status },
  });
  const conn = data?.experiments;
  return (
    <Card withBorder>
      <Group justify="space-between" mb="sm">
        <Text fw={600} component="h2" fz="lg" m={0}>
          Experiments
        </Text>
        <SegmentedControl
          size="xs"
          aria-label="Experiment status"
          value={status}
          onChange={(v) => {
            setStatus(v as typeof status);
            pager.reset();
          }}
          data={[
            { label: 'All', value: 'ALL' },
            { label: 'Draft', value: 'DRAFT' },
            { label: 'Running', value: 'RUNNING' },
            { label: 'Stopped', value: 'STOPPED' },
          ]}
        />
      </Group>
      <ErrorNote error={error} />
      {fetching && !conn && <Loading />}
      {conn && conn.totalCount === 0 && (
        <Text size="sm" c="dimmed">
          No experiments{status === 'ALL' ? '' : ` ${status.toLowerCase()}`} (POST /v1/experiments).
        </Text>
      )}
      {conn && conn.totalCount > 0 && (
        <>
          <Table aria-label="Experiments" fz="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Split</Table.Th>
                <Table.Th>Started</Table.Th>
                <Table.Th>Stopped</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {conn.edges.map(({ node: e }) => (
                <Table.Tr key={e.id}>
                  <Table.Td>{e.name}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={e.status} />
                  </Table.Td>
                  <Table.Td>{e.variants.map((v) => `${v.key} ${v.trafficPercent}%`).join(' / ')}</Table.Td>
                  <Table.Td>
                    <Day at={e.startedAt} />
                  </Table.Td>
                  <Table.Td>
                    <Day at={e.stoppedAt} />
                  </Table.Td>
                  <Table.Td>
                    <Button size="xs" variant="default" onClick={() => onOpen(e.id)} aria-label={`Open ${e.name}`}>
                      Open
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <PagerControls pager={pager} pageInfo={conn.pageInfo} totalCount={conn.totalCount} />
        </>
      )}
    </Card>
  );
}
