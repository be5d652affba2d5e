import { useState } from 'react';
import { Button, Card, Group, Modal, Radio, SegmentedControl, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../../gql';
import type { ChangeEffective } from '../../../gql/graphql';
import { cadenceText } from '../../../lib/cadence';
import { formatMoney } from '../../../lib/money';
import { Day, ErrorNote, Loading } from '../../../lib/ui';

const ProductPlans = graphql(`
  query ChangePlanOptions($productId: ID!) {
    product(id: $productId) {
      id
      plans {
        id
        name
        billingFrequency
        billingInterval
        prices {
          id
          amount
          currency
        }
      }
    }
  }
`);

const Preview = graphql(`
  query ChangePlanPreview($id: ID!, $input: ChangePlanInput!) {
    previewPlanChange(id: $id, input: $input) {
      ...PlanChangePreviewParts
    }
  }
`);

const Change = graphql(`
  mutation ChangePlanConfirm($id: ID!, $input: ChangePlanInput!) {
    changeSubscriptionPlan(id: $id, input: $input) {
      subscription {
        id
        planId
        priceId
      }
      invoice {
        id
        number
        total
      }
      creditNote {
        id
        number
        total
      }
    }
  }
`);

interface Sub {
  id: string;
  productId: string;
  priceId: string;
  currency: string;
}

/** Change plan, with what it costs (proration, GST, total) shown before it is confirmed (previewPlanChange). */
export function ChangePlanModal(props: { subscription: Sub; onClose: () => void; onChanged: () => void }) {
  const s = props.subscription;
  const [{ data, error }] = useQuery({ query: ProductPlans, variables: { productId: s.productId } });
  const [choice, setChoice] = useState<string | null>(null); // "planId:priceId"
  const [effective, setEffective] = useState<ChangeEffective>('NOW');
  const [planId, priceId] = choice ? choice.split(':') : [null, null];
  const input = { planId: planId ?? '', priceId, effective };
  const [preview] = useQuery({
    query: Preview,
    variables: { id: s.id, input },
    pause: !choice,
    requestPolicy: 'network-only',
  });
  const [change, runChange] = useMutation(Change);
  const p = preview.data?.previewPlanChange;
  const options =
    data?.product.plans.flatMap((plan) =>
      plan.prices
        .filter((pr) => pr.currency === s.currency)
        .map((pr) => ({ plan, price: pr, current: pr.id === s.priceId })),
    ) ?? [];
  const money = (n: number) => formatMoney(n, s.currency);
  return (
    <Modal opened onClose={props.onClose} title="Change plan" size="lg">
      <Stack>
        <ErrorNote error={error ?? preview.error ?? change.error} />
        {!data && !error && <Loading />}
        <Radio.Group value={choice} onChange={setChoice} label="New plan and price">
          <Stack gap={6} mt="xs">
            {options.map(({ plan, price, current }) => (
              <Radio
                key={price.id}
                value={`${plan.id}:${price.id}`}
                disabled={current}
                label={`${plan.name} · ${money(price.amount)} ${cadenceText(plan)}${current ? ' (current)' : ''}`}
              />
            ))}
          </Stack>
        </Radio.Group>
        <SegmentedControl
          value={effective}
          onChange={(v) => setEffective(v as ChangeEffective)}
          data={[
            { label: 'Now, prorated', value: 'NOW' },
            { label: 'At period end', value: 'PERIOD_END' },
          ]}
        />
        {choice && !p && !preview.error && <Loading label="Working out the proration…" />}
        {p && (
          <Card withBorder bg="gray.0" data-testid="proration-preview">
            {p.proration ? (
              <Table>
                <Table.Tbody>
                  <Table.Tr>
                    <Table.Td>Unused time credited</Table.Td>
                    <Table.Td ta="right" data-testid="proration-credit">
                      {money(p.proration.creditAmount)}
                    </Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Td>New plan for the rest of the period</Table.Td>
                    <Table.Td ta="right" data-testid="proration-debit">
                      {money(p.proration.debitAmount)}
                    </Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Td>GST</Table.Td>
                    <Table.Td ta="right">{money(p.taxAmount)}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Td fw={700}>{p.total >= 0 ? 'Collected now' : 'Credited to the next invoices'}</Table.Td>
                    <Table.Td ta="right" fw={700} data-testid="proration-total">
                      {money(Math.abs(p.total))}
                    </Table.Td>
                  </Table.Tr>
                </Table.Tbody>
              </Table>
            ) : (
              <Text size="sm">
                Nothing is prorated: the change takes effect on <Day at={p.effectiveAt} />.
              </Text>
            )}
            <Text size="xs" c="dimmed" mt="xs">
              From then on {money(p.newAmount)} a period,{' '}
              {p.taxBehavior === 'INCLUSIVE' ? 'GST included' : 'before tax'}.
            </Text>
          </Card>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose}>
            Back
          </Button>
          <Button
            disabled={!p}
            loading={change.fetching}
            onClick={async () => {
              const r = await runChange({ id: s.id, input });
              if (!r.error) props.onChanged();
            }}
          >
            Confirm plan change
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
