import { useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, recurringPlan } from './helpers';

/**
 * A subscription's customer, plan and product as objects (src/modules/subscriptions/subscription.relations.resolver.ts):
 * right for each row, and a page of subscriptions reads each relation with one query, however many rows it has.
 */

const h = useHarness();

const LIST = `query { subscriptions(first: 50) { edges { node { id customerId customer { id email } plan { id name } product { id name } } } } }`;

it('names the customer, plan and product of each subscription, one query per relation for a page', async () => {
  const m = await h.merchant();
  await connect(m.test, 'stripe');
  const a = await recurringPlan(m.test, { name: 'Monthly A' });
  const b = await recurringPlan(m.test, { name: 'Monthly B' });
  const subs = [];
  for (const cat of [a, b, a])
    subs.push((await authorise(m.test, await createSubscription(m.test, cat.plan.id))).subscription);

  const read = async () => {
    h.app.sql.reset();
    const body = await m.test.gql(LIST);
    return { body, statements: h.app.sql.count };
  };
  const { body } = await read();
  expect(body.errors).toBeUndefined();
  const nodes = body.data.subscriptions.edges.map((e: any) => e.node);
  expect(nodes).toHaveLength(3);
  for (const sub of subs) {
    const node = nodes.find((n: any) => n.id === sub.id);
    const cat = sub.plan_id === a.plan.id ? a : b;
    expect(node.customer).toEqual({ id: sub.customer_id, email: expect.stringContaining('@example.com') });
    expect(node.plan).toEqual({ id: cat.plan.id, name: cat.plan.name });
    expect(node.product).toEqual({ id: cat.product.id, name: cat.product.name });
  }

  // Six more subscriptions: the same number of statements.
  const few = (await read()).statements;
  for (let i = 0; i < 6; i++) await createSubscription(m.test, (i % 2 ? a : b).plan.id);
  expect((await read()).statements).toBe(few);
});
