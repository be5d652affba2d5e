import { useState } from 'react';
import { Badge, Button, Card, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { Select } from '../../lib/select';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { BillingFrequency, ProductType } from '../../gql/graphql';
import { cadenceText } from '../../lib/cadence';
import { parseMoney } from '../../lib/money-input';
import { ErrorNote, Loading, Money, PageTitle, PagerControls, usePager } from '../../lib/ui';

const CatalogProducts = graphql(`
  query CatalogProducts($first: Int, $after: String) {
    products(first: $first, after: $after) {
      totalCount
      pageInfo {
        ...PageInfoParts
      }
      edges {
        node {
          id
          name
          description
          status
          type
          plans {
            id
            name
            billingFrequency
            billingInterval
            prices {
              id
              amount
              currency
              isDefault
            }
          }
        }
      }
    }
  }
`);
const CreateProduct = graphql(`
  mutation CatalogCreateProduct($input: CreateProductInput!) {
    createProduct(input: $input) {
      id
    }
  }
`);
const UpdateProduct = graphql(`
  mutation CatalogUpdateProduct($id: ID!, $input: UpdateProductInput!) {
    updateProduct(id: $id, input: $input) {
      id
      name
      status
    }
  }
`);
const CreatePlan = graphql(`
  mutation CatalogCreatePlan($productId: ID!, $input: CreatePlanInput!) {
    createPlan(productId: $productId, input: $input) {
      id
    }
  }
`);
const CreatePrice = graphql(`
  mutation CatalogCreatePrice($planId: ID!, $input: CreatePriceInput!) {
    createPrice(planId: $planId, input: $input) {
      id
    }
  }
`);

export function Catalog() {
  const pager = usePager();
  const [{ data, error, fetching }, refetch] = useQuery({
    query: CatalogProducts,
    variables: { first: 20, after: pager.after },
  });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const [name, setName] = useState('');
  const [type, setType] = useState<ProductType>('SUBSCRIPTION');
  const [created, create] = useMutation(CreateProduct);
  const p = data?.products;
  return (
    <Stack>
      <PageTitle>Catalog</PageTitle>
      <Card withBorder>
        <Group align="flex-end">
          <TextInput label="Product name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
          <Select
            label="Type"
            value={type}
            onChange={(v) => setType((v as ProductType) ?? 'SUBSCRIPTION')}
            data={[
              { value: 'SUBSCRIPTION', label: 'Subscription' },
              { value: 'ONE_TIME', label: 'One-time' },
            ]}
          />
          <Button
            loading={created.fetching}
            onClick={async () => {
              const r = await create({ input: { name, type } });
              if (!r.error) {
                setName('');
                reload();
              }
            }}
          >
            Add product
          </Button>
        </Group>
        <ErrorNote error={created.error} />
      </Card>
      <ErrorNote error={error} />
      {fetching && !p && <Loading />}
      {p?.edges.map(({ node }) => (
        <ProductCard key={node.id} product={node} onChanged={reload} />
      ))}
      <PagerControls pager={pager} pageInfo={p?.pageInfo} totalCount={p?.totalCount} />
    </Stack>
  );
}

function ProductCard({ product, onChanged }: { product: ProductNodeShape; onChanged: () => void }) {
  const [rename, setRename] = useState(product.name);
  const [updated, update] = useMutation(UpdateProduct);
  const [planName, setPlanName] = useState('');
  const [frequency, setFrequency] = useState<BillingFrequency>('MONTHLY');
  const [plan, createPlan] = useMutation(CreatePlan);
  return (
    <Card withBorder data-product-id={product.id}>
      <Group justify="space-between" mb="xs">
        <Group gap="xs">
          <TextInput
            aria-label="Product name"
            value={rename}
            onChange={(e) => setRename(e.currentTarget.value)}
            size="xs"
            w={260}
          />
          {rename !== product.name && (
            <Button
              size="compact-xs"
              onClick={() => update({ id: product.id, input: { name: rename } }).then(onChanged)}
            >
              Save name
            </Button>
          )}
          <Badge variant="light">{product.type.toLowerCase().replace('_', '-')}</Badge>
          <Badge variant="light" color={product.status === 'ACTIVE' ? 'green' : 'gray'}>
            {product.status.toLowerCase()}
          </Badge>
        </Group>
        <Button
          size="compact-xs"
          variant="default"
          onClick={() =>
            update({
              id: product.id,
              input: { status: product.status === 'ACTIVE' ? 'INACTIVE' : 'ACTIVE' },
            }).then(onChanged)
          }
        >
          {product.status === 'ACTIVE' ? 'Deactivate' : 'Activate'}
        </Button>
      </Group>
      <ErrorNote error={updated.error ?? plan.error} />
      <Table>
        <Table.Tbody>
          {product.plans.map((pl) => (
            <PlanRow key={pl.id} plan={pl} onChanged={onChanged} />
          ))}
        </Table.Tbody>
      </Table>
      {product.type === 'SUBSCRIPTION' && (
        <Group align="flex-end" mt="xs">
          <TextInput label="New plan" size="xs" value={planName} onChange={(e) => setPlanName(e.currentTarget.value)} />
          <Select
            label="Billed"
            size="xs"
            value={frequency}
            onChange={(v) => setFrequency((v as BillingFrequency) ?? 'MONTHLY')}
            data={['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'].map((f) => ({ value: f, label: f.toLowerCase() }))}
          />
          <Button
            size="xs"
            variant="default"
            onClick={async () => {
              const r = await createPlan({
                productId: product.id,
                input: { name: planName, billingFrequency: frequency },
              });
              if (!r.error) {
                setPlanName('');
                onChanged();
              }
            }}
          >
            Add plan
          </Button>
        </Group>
      )}
    </Card>
  );
}

interface ProductNodeShape {
  id: string;
  name: string;
  status: 'ACTIVE' | 'INACTIVE';
  type: ProductType;
  plans: PlanShape[];
}
interface PlanShape {
  id: string;
  name: string;
  billingFrequency?: BillingFrequency | null;
  billingInterval: number;
  prices: { id: string; amount: number; currency: string; isDefault: boolean }[];
}

function PlanRow({ plan, onChanged }: { plan: PlanShape; onChanged: () => void }) {
  const [amount, setAmount] = useState('');
  const [currency, setCurrency] = useState('INR');
  const [price, createPrice] = useMutation(CreatePrice);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <Table.Tr data-plan-id={plan.id}>
      <Table.Td>
        <Text size="sm" fw={600}>
          {plan.name}
        </Text>
        <Text size="xs" c="dimmed">
          {cadenceText(plan)}
        </Text>
      </Table.Td>
      <Table.Td>
        <Group gap="xs">
          {plan.prices.map((pr) => (
            <Badge key={pr.id} variant={pr.isDefault ? 'filled' : 'light'} tt="none">
              <Money amount={pr.amount} currency={pr.currency} />
            </Badge>
          ))}
        </Group>
      </Table.Td>
      <Table.Td>
        <Group gap={4} align="flex-start" wrap="nowrap">
          <TextInput
            size="xs"
            aria-label={`Price for ${plan.name}`}
            placeholder="499.00"
            value={amount}
            onChange={(e) => setAmount(e.currentTarget.value)}
            error={problem}
            w={110}
          />
          <TextInput
            size="xs"
            aria-label={`Currency for ${plan.name}`}
            value={currency}
            onChange={(e) => setCurrency(e.currentTarget.value.toUpperCase())}
            w={64}
          />
          <Button
            size="xs"
            variant="default"
            loading={price.fetching}
            onClick={async () => {
              const subunits = parseMoney(amount, currency);
              if (subunits === null) return setProblem(`Not an amount in ${currency}`);
              setProblem(null);
              const r = await createPrice({
                planId: plan.id,
                input: { amount: subunits, currency, isDefault: plan.prices.length === 0 },
              });
              if (!r.error) {
                setAmount('');
                onChanged();
              }
            }}
          >
            Add price
          </Button>
        </Group>
        <ErrorNote error={price.error} />
      </Table.Td>
    </Table.Tr>
  );
}
