import { useState } from 'react';
import { Button, Card, Group, Modal, Stack, Table, Text, TextInput } from '@mantine/core';
import { Select } from '../../lib/select';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { PaymentStatus } from '../../gql/graphql';
import { formatMoney, toDecimal } from '../../lib/money';
import { parseMoney } from '../../lib/money-input';
import { Day, ErrorNote, Loading, Money, PageTitle, PagerControls, StatusBadge, usePager } from '../../lib/ui';

const PaymentsList = graphql(`
  query PaymentsList($first: Int, $after: String, $status: PaymentStatus) {
    payments(first: $first, after: $after, status: $status) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          status
          amount
          taxAmount
          amountTotal
          amountRefunded
          currency
          customerEmail
          billingReason
          method
          createdAt
          refunds {
            id
            amount
            status
            createdAt
          }
        }
      }
    }
  }
`);

const Refund = graphql(`
  mutation PaymentRefund($id: ID!, $input: RefundPaymentInput) {
    refundPayment(id: $id, input: $input) {
      id
      amount
      status
    }
  }
`);

type Row = NonNullable<ReturnType<typeof usePayments>['0']['data']>['payments']['edges'][number]['node'];
const usePayments = (vars: { first: number; after: string | null; status: PaymentStatus | null }) =>
  useQuery({ query: PaymentsList, variables: vars });

export function Payments() {
  const [status, setStatus] = useState<PaymentStatus | null>(null);
  const pager = usePager();
  const [{ data, error, fetching }, refetch] = usePayments({ first: 25, after: pager.after, status });
  const [refunding, setRefunding] = useState<Row | null>(null);
  const p = data?.payments;
  return (
    <Stack>
      <PageTitle>Payments</PageTitle>
      <Select
        label="Status"
        placeholder="Any status"
        clearable
        maw={240}
        value={status}
        onChange={(v) => {
          setStatus(v as PaymentStatus | null);
          pager.reset();
        }}
        data={['SUCCEEDED', 'PENDING', 'FAILED', 'PARTIALLY_REFUNDED', 'REFUNDED', 'EXPIRED'].map((s) => ({
          value: s,
          label: s.toLowerCase().replace('_', ' '),
        }))}
      />
      <ErrorNote error={error} />
      {fetching && !p && <Loading />}
      {p && (
        <Card withBorder padding={0}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Customer</Table.Th>
                <Table.Th>For</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th ta="right">Amount</Table.Th>
                <Table.Th ta="right">With GST</Table.Th>
                <Table.Th ta="right">Refunded</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {p.edges.map(({ node }) => (
                <Table.Tr key={node.id} data-payment-id={node.id}>
                  <Table.Td>{node.customerEmail}</Table.Td>
                  <Table.Td>{node.billingReason.toLowerCase().replace(/_/g, ' ')}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={node.status} />
                  </Table.Td>
                  <Table.Td ta="right">
                    <Money amount={node.amount} currency={node.currency} />
                  </Table.Td>
                  <Table.Td ta="right" data-testid="amount-total">
                    <Money amount={node.amountTotal} currency={node.currency} />
                  </Table.Td>
                  <Table.Td ta="right" data-testid="amount-refunded">
                    <Money amount={node.amountRefunded} currency={node.currency} />
                  </Table.Td>
                  <Table.Td>
                    <Day at={node.createdAt} />
                  </Table.Td>
                  <Table.Td>
                    {(node.status === 'SUCCEEDED' || node.status === 'PARTIALLY_REFUNDED') && (
                      <Button size="compact-xs" variant="default" onClick={() => setRefunding(node)}>
                        Refund
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      )}
      <PagerControls pager={pager} pageInfo={p?.pageInfo} totalCount={p?.totalCount} />
      {refunding && (
        <RefundModal
          payment={refunding}
          onClose={() => setRefunding(null)}
          onDone={() => {
            setRefunding(null);
            refetch({ requestPolicy: 'network-only' });
          }}
        />
      )}
    </Stack>
  );
}

function RefundModal({ payment, onClose, onDone }: { payment: Row; onClose: () => void; onDone: () => void }) {
  const left = payment.amountTotal - payment.amountRefunded;
  const [amount, setAmount] = useState(toDecimal(left, payment.currency));
  const [reason, setReason] = useState('');
  const [state, run] = useMutation(Refund);
  const parsed = parseMoney(amount, payment.currency);
  return (
    <Modal opened onClose={onClose} title="Refund payment">
      <Stack>
        <Text size="sm">
          Refundable: {formatMoney(left, payment.currency)} (GST included). The refund issues a credit note against the
          payment&apos;s invoice.
        </Text>
        <TextInput
          label={`Amount (${payment.currency})`}
          value={amount}
          onChange={(e) => setAmount(e.currentTarget.value)}
          error={parsed === null ? 'Enter an amount such as 499.00' : null}
        />
        <TextInput label="Reason" value={reason} onChange={(e) => setReason(e.currentTarget.value)} />
        <ErrorNote error={state.error} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Back
          </Button>
          <Button
            color="red"
            disabled={parsed === null}
            loading={state.fetching}
            onClick={async () => {
              const r = await run({ id: payment.id, input: { amount: parsed, reason: reason || null } });
              if (!r.error) onDone();
            }}
          >
            Refund {parsed !== null ? formatMoney(parsed, payment.currency) : ''}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
