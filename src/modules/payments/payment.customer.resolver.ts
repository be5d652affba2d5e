import { Ctx as C, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { defineLoader } from '../../core/context';
import { Money } from '../../core/scalars';
import { CurrencyAmount, Customer } from '../customers';
import { currentMerchant } from '../merchants';
import { lifetimeRevenueByCustomer } from './payment.store';

/** Lifetime revenue per customer and currency (paid invoices and uninvoiced payments, less refunds: payment.store.ts), one query per page. */
const revenueByCustomer = defineLoader<string, CurrencyAmount[]>('revenueByCustomer', async (ctx, ids) => {
  const rows = await lifetimeRevenueByCustomer(ctx.em, ids);
  return ids.map((id) =>
    rows
      .filter((r) => r.customerId === id)
      .map((r) => Object.assign(new CurrencyAmount(), { currency: r.currency, amount: r.amount })),
  );
});

/** A customer's revenue: the payments module answers it, as customers sit below payments. */
@Resolver(() => Customer)
export class CustomerRevenueResolver {
  @FieldResolver(() => [CurrencyAmount], {
    description:
      "What the customer paid, less refunds, per currency (no conversion): every invoice's amount paid (subscriptions, plan changes, usage, one-off payments), " +
      'one-off payments no invoice records, less the money refunded; GST included.',
  })
  lifetimeRevenue(@C() ctx: Ctx, @Root() customer: Customer) {
    return revenueByCustomer(ctx).load(customer.id);
  }

  @FieldResolver(() => Money, {
    description:
      "Lifetime revenue in the merchant's reporting currency: its amount in lifetimeRevenue (0 when none; other currencies are not converted).",
  })
  async totalLifetimeRevenue(@C() ctx: Ctx, @Root() customer: Customer) {
    const currency = (await currentMerchant(ctx)).reportingCurrency;
    const all = await revenueByCustomer(ctx).load(customer.id);
    return all.find((r) => r.currency === currency)?.amount ?? 0;
  }
}
