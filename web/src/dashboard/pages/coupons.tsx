import { useState } from 'react';
import { Button, Card, Group, Stack, Table, TextInput } from '@mantine/core';
import { Select } from '../../lib/select';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { CouponDuration } from '../../gql/graphql';
import { formatMoney } from '../../lib/money';
import { parseMoney } from '../../lib/money-input';
import { Day, ErrorNote, Loading, PageTitle, PagerControls, usePager } from '../../lib/ui';

const CouponsList = graphql(`
  query CouponsList($first: Int, $after: String) {
    coupons(first: $first, after: $after) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          code
          name
          percentOff
          amountOff
          currency
          duration
          durationInCycles
          timesRedeemed
          maxRedemptions
          redeemBy
        }
      }
    }
  }
`);
const CreateCoupon = graphql(`
  mutation CouponsCreate($input: CreateCouponInput!) {
    createCoupon(input: $input) {
      id
      code
    }
  }
`);

export function Coupons() {
  const pager = usePager();
  const [{ data, error, fetching }, refetch] = useQuery({
    query: CouponsList,
    variables: { first: 25, after: pager.after },
  });
  const [code, setCode] = useState('');
  const [kind, setKind] = useState<'percent' | 'amount'>('percent');
  const [value, setValue] = useState('');
  const [currency, setCurrency] = useState('INR');
  const [duration, setDuration] = useState<CouponDuration>('ONCE');
  const [cycles, setCycles] = useState<number | string>(3);
  const [problem, setProblem] = useState<string | null>(null);
  const [created, create] = useMutation(CreateCoupon);
  const submit = async () => {
    setProblem(null);
    const off =
      kind === 'percent' ? { percentOff: Number(value) } : { amountOff: parseMoney(value, currency), currency };
    if (kind === 'amount' && off.amountOff === null) return setProblem(`Not an amount in ${currency}`);
    const r = await create({
      input: {
        code,
        duration,
        durationInCycles: duration === 'REPEATING' ? Number(cycles) : null,
        ...off,
      },
    });
    if (!r.error) {
      setCode('');
      setValue('');
      refetch({ requestPolicy: 'network-only' });
    }
  };
  const c = data?.coupons;
  return (
    <Stack>
      <PageTitle>Coupons</PageTitle>
      <Card withBorder>
        <Group align="flex-end">
          <TextInput label="Code" value={code} onChange={(e) => setCode(e.currentTarget.value)} w={160} />
          <Select
            label="Discount"
            value={kind}
            onChange={(v) => setKind((v as 'percent' | 'amount') ?? 'percent')}
            data={[
              { value: 'percent', label: 'Percent off' },
              { value: 'amount', label: 'Amount off' },
            ]}
            w={140}
          />
          <TextInput
            label={kind === 'percent' ? 'Percent' : `Amount (${currency})`}
            value={value}
            onChange={(e) => setValue(e.currentTarget.value)}
            error={problem}
            w={120}
          />
          {kind === 'amount' && (
            <TextInput
              label="Currency"
              value={currency}
              onChange={(e) => setCurrency(e.currentTarget.value.toUpperCase())}
              w={80}
            />
          )}
          <Select
            label="Duration"
            value={duration}
            onChange={(v) => setDuration((v as CouponDuration) ?? 'ONCE')}
            data={[
              { value: 'ONCE', label: 'Once' },
              { value: 'REPEATING', label: 'Repeating' },
              { value: 'FOREVER', label: 'Forever' },
            ]}
            w={130}
          />
          {duration === 'REPEATING' && (
            <TextInput
              type="number"
              label="Periods"
              min={1}
              value={String(cycles)}
              onChange={(e) => setCycles(e.currentTarget.value)}
              w={90}
            />
          )}
          <Button loading={created.fetching} onClick={submit}>
            Create coupon
          </Button>
        </Group>
        <ErrorNote error={created.error} />
      </Card>
      <ErrorNote error={error} />
      {fetching && !c && <Loading />}
      {c && (
        <Card withBorder padding={0}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Code</Table.Th>
                <Table.Th>Discount</Table.Th>
                <Table.Th>Duration</Table.Th>
                <Table.Th>Redeemed</Table.Th>
                <Table.Th>Redeem by</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {c.edges.map(({ node }) => (
                <Table.Tr key={node.id} data-coupon-code={node.code}>
                  <Table.Td>{node.code}</Table.Td>
                  <Table.Td>
                    {node.percentOff != null
                      ? `${node.percentOff}% off`
                      : `${formatMoney(node.amountOff ?? 0, node.currency ?? 'INR')} off`}
                  </Table.Td>
                  <Table.Td>
                    {node.duration.toLowerCase()}
                    {node.durationInCycles ? ` (${node.durationInCycles} periods)` : ''}
                  </Table.Td>
                  <Table.Td>
                    {node.timesRedeemed}
                    {node.maxRedemptions ? ` of ${node.maxRedemptions}` : ''}
                  </Table.Td>
                  <Table.Td>
                    <Day at={node.redeemBy} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
      <PagerControls pager={pager} pageInfo={c?.pageInfo} totalCount={c?.totalCount} />
    </Stack>
  );
}
