import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7, validate as isUuid } from 'uuid';
import type { Ctx } from '../../core/context';
import { tenantEntityManager, tenantOf } from '../../core/context';
import { normaliseCurrency } from '../../core/currency';
import { Mode, TenantParams } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { logger } from '../../core/logger';
import { PageArgs, paginate } from '../../core/pagination';
import type { Serializer } from '../../core/serialize';
import { validateMetadata, validateUrl } from '../../core/validate';
import { GatewayError, GatewayEvent, GatewayPort } from '../../gateways/port';
import { receiveSubscriptionEvent } from './subscription.gateway-events';
import {
  Plan,
  Price,
  Product,
  pickDefaultPrice,
  gatewayPriceId,
  lockPriceRegistration,
  recordGatewayPrice,
  subscriptionTerms,
} from '../catalog';
import { Customer, CustomerDetails, purchaseCustomer } from '../customers';
import type { IdempotentAttempt } from '../idempotency';
import type { InvoiceService } from '../invoices';
import { currentMerchant } from '../merchants';
import { ProviderConnection, fromGatewayError, ProviderService } from '../providers';
import type { Clock } from '../test-clock';
import { gatewayAmounts, TaxSnapshot, taxTreatment, discountOn } from '../../money';
import type { Merchant } from '../merchants';
import {
  BillingSubscription,
  PendingOutcome,
  SubscriptionEvent,
  SubscriptionTaxTreatment,
} from './subscription.entities';
import { applyCancel, applyPause, applyResume, cancelDeferred } from './subscription.pending';
import { ChangeEffective } from './subscription.inputs';
import type { ChangePlanInput, CreateSubscriptionInput } from './subscription.inputs';
import { commandInFlight, FirstMove, SubscriptionChange } from './subscription.lifecycle';
import { SubscriptionStatus, SubscriptionTrigger, transition } from './subscription.machine';
import {
  changePlan,
  ChangePlanResult,
  PlanChangePreview,
  previewPlanChange,
  scheduleChangeAtPeriodEnd,
} from './change-plan';
import {
  checkPausable,
  dropAtGateway,
  dropScheduledChange,
  removeScheduledCancellation,
  removeScheduledChange,
} from './scheduled-change';
import type { CouponService } from '../coupons';
import { couponRefused, discountCycles, Coupon, CouponInvalidReason, redeemCoupon } from '../coupons';
import { MIN_GATEWAY_RECURRING } from './subscription.discount';
import type { Logger } from '../../core/logger';
import { eventsOf, insertSubscription, NewSubscription } from './subscription.store';
import { mandateTerms } from './mandate-terms';
import { services } from '../../services';
import type { GatewayCommands } from '../gateway-commands';
import { endAtGateway, registerSubscriptionCommands } from './subscription.commands';
import { createMandateSetup, MandateSetup, MandateSetupInput } from './mandate-setup';
import { announcedRenewal } from './pre-debit';

const S = SubscriptionStatus;

/**
 * Subscriptions' use cases (docs/subscriptions.md): create, read, and the commands pause, resume, cancel and
 * change-plan. Gateway events and the scheduler's actions are in subscription.gateway-events.ts and
 * subscription.scheduler.ts; every state move of all three goes through SubscriptionChange (the table and the audit row).
 */
export class SubscriptionService {
  constructor(
    /** The ORM's root EntityManager: work outside a request forks it, bound to one tenant. */
    readonly root: EntityManager,
    readonly providers: ProviderService,
    readonly invoices: InvoiceService,
    readonly clock: Clock,
    readonly serializer: () => Serializer,
    readonly coupons: CouponService,
    readonly commands: GatewayCommands,
  ) {
    registerSubscriptionCommands(commands, this);
  }

  /** Merchant time for a tenant (the test clock in test mode). */
  now(tenant: TenantParams): Promise<Date> {
    return this.clock.now(tenant.merchantId, tenant.mode);
  }

  change(em: EntityManager, sub: BillingSubscription): SubscriptionChange {
    return new SubscriptionChange(em, sub, this.serializer, this.commands);
  }

  /**
   * Creates a subscription and its hosted mandate checkout. The price is registered at the gateway first (once), then
   * the checkout; only when the gateway has answered are the customer, the subscription and its first audit row
   * written, together. A retry with the same Idempotency-Key reuses the subscription id, so the gateway replays.
   */
  async create(
    ctx: Ctx,
    input: CreateSubscriptionInput,
    attempt: IdempotentAttempt | null = null,
  ): Promise<BillingSubscription> {
    const merchant = await currentMerchant(ctx);
    const id = attempt?.resourceId ?? uuidv7();
    const existing = attempt && !attempt.fresh ? await ctx.em.findOne(BillingSubscription, { id }) : null;
    if (existing) return existing;

    validateUrl(input.successUrl, 'success_url');
    validateUrl(input.cancelUrl, 'cancel_url');
    const metadata = validateMetadata(input.metadata);
    if (input.couponCode != null && !/^[A-Za-z0-9_-]{1,64}$/.test(input.couponCode)) {
      throw couponRefused(input.couponCode, CouponInvalidReason.NOT_FOUND);
    }
    const customer = await this.customerFor(ctx, input);
    // Plan, product, the candidate prices and the test clock's offset: one prepared statement.
    if (!isUuid(input.planId)) throw notFound('plan', input.planId, 'plan_id');
    const priceId = input.priceId || null;
    const terms = await subscriptionTerms(
      ctx.em,
      input.planId,
      priceId === null ? undefined : isUuid(priceId) ? priceId : null,
    );
    if (!terms) throw notFound('plan', input.planId, 'plan_id');
    const plan = terms.plan;
    if (!plan.billingFrequency) {
      throw new DomainError(
        'plan_not_recurring',
        `Plan ${plan.id} belongs to a one_time product and cannot be subscribed to.`,
        'plan_id',
      );
    }
    const price = this.pickPrice(plan, terms.prices, priceId, input.currency, merchant.reportingCurrency);
    if (!terms.product) throw notFound('product', plan.productId);
    const product = terms.product;
    // A coupon is checked before anything reaches the gateway (merchant time: the offset read with the plan); it is
    // redeemed in the transaction that writes the subscription.
    const now = new Date(Date.now() + terms.clockOffsetMs);
    const coupon =
      input.couponCode != null ? await this.coupons.forSubscription(ctx, input.couponCode, plan, price, now) : null;
    // The first billed period is discounted by every coupon (once, repeating >= 1 period, forever).
    const discount = coupon ? discountOn(price.amount, coupon) : 0;
    const connection = await this.providers.resolve(ctx, input.provider);
    const gateway = this.providers.gatewayFor(connection);
    // The tax is fixed now; the gateway charges each invoice's total under it (GST included), discounted while the
    // coupon lasts (the "discounted plan": subscription.discount.ts).
    const tax = { ...(await this.taxAtCreate(ctx, merchant, price.currency, customer)), behavior: price.taxBehavior };
    const charge = gatewayAmounts(price.amount - discount, price.setupFee, tax);
    if (coupon && charge.recurring < MIN_GATEWAY_RECURRING[connection.provider]) {
      throw invalid(
        'coupon_code',
        `Coupon '${coupon.code}' cannot be applied: the discounted amount (${charge.recurring}) is below what ${connection.provider} can charge per period (${MIN_GATEWAY_RECURRING[connection.provider]}).`,
      );
    }
    const known = terms.gatewayPriceIds.get(price.id)?.[`${connection.provider}:${charge.recurring}`];
    const providerPriceId =
      known ??
      (await this.registerPriceAtGateway(ctx, gateway, connection, {
        price,
        plan,
        product,
        gatewayAmount: charge.recurring,
        discounted: discount > 0,
      }));
    await this.alignSandboxClock(ctx, gateway, terms.clockOffsetMs);

    const mandate =
      price.currency === 'INR'
        ? mandateTerms({
            afaLimit: merchant.mandateAfaLimit,
            firstDebit: charge.recurring + charge.setupFee,
            now: new Date(Date.now() + terms.clockOffsetMs),
            trialDays: plan.trialPeriodDays,
            frequency: plan.billingFrequency!,
            interval: plan.billingInterval,
            maxCycles: plan.maxCycles ?? null,
          })
        : null;
    const successUrl = input.successUrl.replaceAll('{SUBSCRIPTION_ID}', id);
    const cancelUrl = input.cancelUrl.replaceAll('{SUBSCRIPTION_ID}', id);
    let checkout;
    try {
      checkout = await gateway.createSubscriptionCheckout({
        subscriptionId: id,
        providerPriceId,
        amount: charge.recurring,
        currency: price.currency,
        setupFee: charge.setupFee,
        trialDays: plan.trialPeriodDays,
        maxCycles: plan.maxCycles ?? null,
        mandateAfaLimit: price.currency === 'INR' ? merchant.mandateAfaLimit : null,
        mandate,
        customer: { email: customer.email, name: customer.name ?? null, phone: customer.phone ?? null },
        successUrl,
        cancelUrl,
        idempotencyKey: `subscription-${id}`,
      });
    } catch (err) {
      ctx.log.warn({ err, subscription_id: id, provider: connection.provider }, 'gateway subscription checkout failed');
      throw fromGatewayError(err);
    }

    const fields: NewSubscription = {
      id,
      productId: product.id,
      planId: plan.id,
      priceId: price.id,
      currency: price.currency,
      amount: price.amount,
      setupFee: price.setupFee,
      billingFrequency: plan.billingFrequency!,
      billingInterval: plan.billingInterval,
      trialPeriodDays: plan.trialPeriodDays,
      trialEndAction: plan.trialEndAction,
      provider: connection.provider,
      connectionId: connection.id,
      providerSubscriptionId: checkout.providerSubscriptionId ?? null,
      providerCustomerId: checkout.providerCustomerId ?? null,
      checkoutSessionId: checkout.checkoutSessionId,
      checkoutUrl: checkout.checkoutUrl,
      successUrl,
      cancelUrl,
      maxCycles: plan.maxCycles ?? null,
      couponCode: coupon?.code ?? null,
      metadata,
      taxTreatment: tax.treatment as SubscriptionTaxTreatment,
      taxRateBps: tax.rateBps,
      taxBehavior: price.taxBehavior,
      // The coupon's discount, fixed now (subscription.discount.ts); the gateway charges the discounted price.
      couponId: coupon?.id ?? null,
      discountPercentBps: coupon?.percentOffBps ?? null,
      discountAmountOff: coupon?.amountOff ?? null,
      discountCycles: coupon ? discountCycles(coupon) : null,
      gatewayDiscounted: discount > 0,
      mandateMaxAmount: mandate?.maxAmount ?? null,
      mandateFrequency: mandate?.frequency ?? null,
      mandateValidUntil: mandate?.validUntil ?? null,
      // The scheduler ends a checkout nobody completes (subscription.scheduler.ts checkout_expiry), on merchant time.
      nextActionAt: new Date(
        Date.now() + terms.clockOffsetMs + services(ctx).config.subscriptionCheckoutExpirySeconds * 1000,
      ),
    };
    try {
      return await ctx.em.transactional(async (em) => {
        // The table's first move, written with its audit row; the outbox event and the live notice go with the commit.
        const owner = customer.id ? { id: customer.id, fill: customer.fill } : customer;
        const insert = (first: FirstMove) => insertSubscription(em, fields, owner, uuidv7(), first);
        const change = await SubscriptionChange.create(em, this.serializer, this.commands, insert);
        if (coupon) await this.redeem(em, change.sub, coupon, terms.clockOffsetMs);
        await change.save();
        return change.sub;
      });
    } catch (err) {
      // The coupon was refused at redemption (its limit reached meanwhile): nothing was written, and a gateway
      // subscription made with the checkout (Razorpay) is cancelled so no mandate can ever be authorised on it (a
      // Stripe checkout's URL was never given out; it expires at the gateway). Other failures leave it: a retry with
      // the same Idempotency-Key gets the same gateway subscription back.
      if (err instanceof DomainError && err.param === 'coupon_code' && checkout.providerSubscriptionId) {
        const made = checkout.providerSubscriptionId;
        await gateway
          .cancelSubscription(made, { atPeriodEnd: false })
          .catch((e) =>
            ctx.log.warn({ err: e, subscription_id: id }, 'cancelling an unwritten gateway subscription failed'),
          );
      }
      throw err;
    }
  }

  /**
   * Takes the coupon's redemption for a new subscription in its create transaction (coupon.store.ts redeemCoupon: a
   * conditional update, so concurrent creates never pass max_redemptions; the loser's create rolls back whole: 400).
   */
  private async redeem(
    em: EntityManager,
    sub: BillingSubscription,
    coupon: Coupon,
    clockOffsetMs: number,
  ): Promise<void> {
    if (await redeemCoupon(em, { couponId: coupon.id, subscriptionId: sub.id, customerId: sub.customerId })) return;
    // Lost to the limit, or redeem_by passed since the check (merchant time: the wall clock plus the test clock's offset).
    const expired = coupon.redeemBy != null && Date.now() + clockOffsetMs > coupon.redeemBy.getTime();
    throw couponRefused(
      coupon.code,
      expired ? CouponInvalidReason.EXPIRED : CouponInvalidReason.MAX_REDEMPTIONS_REACHED,
    );
  }

  /**
   * In test mode with the test clock moved, the gateway sandbox's clock is brought to the merchant's first, so the
   * mandate is authorised (and periods start) on the merchant's time even for a connection made after the advance.
   * `offsetMs` is the test clock's offset, read with the plan (subscriptionTerms), so the clock costs no statement.
   */
  private async alignSandboxClock(ctx: Ctx, gateway: GatewayPort, offsetMs: number): Promise<void> {
    const tenant = tenantOf(ctx);
    if (tenant.mode !== Mode.TEST) return;
    if (offsetMs < 1_000) return;
    const now = new Date(Date.now() + offsetMs);
    try {
      // The scheduler synced it during the advance, or the connection is new: a catch-up, bounded as any call.
      await gateway.advanceTestClock(now, { nothingDue: true });
    } catch (err) {
      if (!(err instanceof GatewayError && err.code === 'gateway_rejected')) throw fromGatewayError(err);
    }
  }

  /**
   * The request's customer (docs/payments.md, "Customers"): `customer_id`, else found or created by `customer_email`
   * when the subscription is written; the request's details fill in what the record lacks (the record's win for tax).
   */
  private async customerFor(
    ctx: Ctx,
    input: CreateSubscriptionInput,
  ): Promise<{
    id?: string;
    email: string;
    name?: string | null;
    phone?: string | null;
    stateCode?: string | null;
    gstin?: string | null;
    fill?: CustomerDetails;
  }> {
    const { record: c, details } = await purchaseCustomer(ctx, input);
    if (!c) return details;
    return {
      id: c.id,
      email: c.email,
      name: c.name ?? details.name,
      phone: c.phone ?? details.phone,
      stateCode: c.stateCode ?? details.stateCode,
      gstin: c.gstin ?? details.gstin,
      fill: details,
    };
  }

  /**
   * `price_id` (one of the plan's), else the plan's default price in `currency`, else the plan's default price.
   * `prices` are what subscriptionTerms read: the price `price_id` names (none: 404), else the plan's defaults.
   */
  private pickPrice(
    plan: Plan,
    prices: Price[],
    priceId: string | null,
    currency: string | null | undefined,
    reporting: string,
  ): Price {
    if (priceId) {
      const price = prices[0];
      if (!price) throw notFound('price', priceId, 'price_id');
      if (price.planId !== plan.id) throw invalid('price_id', `Price ${price.id} is not a price of plan ${plan.id}.`);
      if (currency && normaliseCurrency(currency) !== price.currency) {
        throw new DomainError(
          'currency_mismatch',
          `Price ${price.id} is in ${price.currency}, not ${currency.toUpperCase()}.`,
          'currency',
        );
      }
      return price;
    }
    if (currency) {
      const code = normaliseCurrency(currency);
      const price = prices.find((p) => p.currency === code);
      if (!price) throw invalid('currency', `Plan ${plan.id} has no default price in ${code}.`);
      return price;
    }
    const price = pickDefaultPrice(prices, reporting);
    if (!price) throw invalid('plan_id', `Plan ${plan.id} has no default price: give price_id.`);
    return price;
  }

  /**
   * The subscription's tax (docs/invoices-and-gst.md), fixed at creation: the merchant's GSTIN, state and rate now, and
   * the customer's state as its record will have it (an existing customer's details are kept, as the create's upsert
   * keeps them; a GSTIN's first two digits stand for its state). Read only when it can matter (an INR price of a
   * merchant with a GSTIN), so an untaxed create costs no statement.
   */
  private async taxAtCreate(
    ctx: Ctx,
    merchant: Merchant,
    currency: string,
    customer: { id?: string; email: string; stateCode?: string | null; gstin?: string | null },
  ): Promise<TaxSnapshot> {
    const parties = {
      currency,
      merchantGstin: merchant.gstin ?? null,
      merchantState: merchant.stateCode ?? merchant.gstin?.slice(0, 2) ?? null,
    };
    if (taxTreatment({ ...parties, customerState: null }) === 'none') return { treatment: 'none', rateBps: 0 };
    let { stateCode, gstin } = customer;
    if (!customer.id) {
      // A fork: the request's EntityManager keeps no copy that invoices issued in it would take for the customer.
      const existing = await ctx.em.fork().findOne(Customer, { email: customer.email });
      stateCode = existing?.stateCode ?? stateCode;
      gstin = existing?.gstin ?? gstin;
    }
    const treatment = taxTreatment({ ...parties, customerState: stateCode ?? gstin?.slice(0, 2) ?? null });
    return { treatment, rateBps: treatment === 'none' ? 0 : merchant.taxRateBps };
  }

  /**
   * The price's id at the connection's gateway for `gatewayAmount` (its amount plus a tax treatment's GST), registered
   * there the first time a subscription needs it (Stripe Product + Price, Razorpay Plan) — exactly once per amount
   * however many requests race: they queue on a transaction-scoped advisory lock of the price, gateway and amount, and
   * all but the first find the id recorded. `discounted`: the amount is a coupon's discounted one, which never becomes
   * the price's `provider_price_ids` entry. `scope`: a request's context, or an EntityManager of the tenant and a
   * logger (follow-ups after a commit).
   */
  async registerPriceAtGateway(
    scope: { em: EntityManager; log: Logger },
    gateway: GatewayPort,
    connection: ProviderConnection,
    c: { price: Price; plan: Plan; product: Product; gatewayAmount: number; discounted?: boolean },
  ): Promise<string> {
    const known = await gatewayPriceId(scope.em, c.price.id, connection.provider, c.gatewayAmount);
    if (known) return known;
    return scope.em.fork().transactional(async (em) => {
      const recorded = await lockPriceRegistration(em, c.price.id, connection.provider, c.gatewayAmount);
      if (recorded) return recorded;
      let registered;
      try {
        registered = await gateway.registerPrice({
          priceId: c.price.id,
          productName: c.product.name,
          planName: c.plan.name,
          amount: c.gatewayAmount,
          currency: c.price.currency,
          frequency: c.plan.billingFrequency!,
          interval: c.plan.billingInterval,
          idempotencyKey: `price-${c.price.id}-${connection.id}-${c.gatewayAmount}`,
        });
      } catch (err) {
        scope.log.warn(
          { err, price_id: c.price.id, provider: connection.provider },
          'gateway price registration failed',
        );
        throw fromGatewayError(err);
      }
      await recordGatewayPrice(em, {
        priceId: c.price.id,
        provider: connection.provider,
        gatewayAmount: c.gatewayAmount,
        providerPriceId: registered.providerPriceId,
        discounted: c.discounted ?? false,
      });
      return registered.providerPriceId;
    });
  }

  subscription(ctx: Ctx, id: string) {
    return findOr404(ctx.em, BillingSubscription, id, 'subscription');
  }

  subscriptions(
    ctx: Ctx,
    args: PageArgs & { status?: SubscriptionStatus | null; customerId?: string | null; planId?: string | null },
  ) {
    tenantOf(ctx);
    const where: Record<string, unknown> = {};
    if (args.status) where.status = args.status;
    for (const [key, value] of [
      ['customerId', args.customerId],
      ['planId', args.planId],
    ] as const) {
      if (!value) continue;
      if (!isUuid(value)) return paginate(ctx.em, BillingSubscription, { id: null }, args);
      where[key] = value;
    }
    return paginate(ctx.em, BillingSubscription, where, args);
  }

  /** The audit trail, oldest first (404 for an unknown id, as for the subscription itself). */
  async events(ctx: Ctx, id: string): Promise<SubscriptionEvent[]> {
    await this.subscription(ctx, id);
    return eventsOf(ctx.em, id);
  }

  // --- commands ---------------------------------------------------------------------------------------------------

  pause(ctx: Ctx, id: string): Promise<BillingSubscription> {
    return this.command(
      ctx,
      id,
      'pause',
      (gw, sub) => gw.pauseSubscription(sub.providerSubscriptionId!),
      (change, now) => applyPause(change, now),
      undefined,
      { command: 'pause' },
      checkPausable,
    );
  }

  /**
   * The customer declines the renewal debit a pre-debit notice announced (the portal; docs/india.md): the subscription
   * is paused before it, as `pause` does (the gateway told, the audit row saying why), and the notice marked declined,
   * in one transaction. 409 no_announced_debit when no such debit is ahead.
   */
  async declineDebit(ctx: Ctx, id: string): Promise<BillingSubscription> {
    const now = await this.now(tenantOf(ctx));
    if (!(await announcedRenewal(ctx.em, id, now))) {
      await this.subscription(ctx, id); // 404 for another customer's or an unknown one
      throw new DomainError('no_announced_debit', 'No debit from the mandate is announced for this subscription.');
    }
    return this.command(
      ctx,
      id,
      'pause',
      (gw, sub) => gw.pauseSubscription(sub.providerSubscriptionId!),
      async (change, at) => {
        const notice = await announcedRenewal(change.em, id, at);
        if (notice) notice.declinedAt = at;
        applyPause(change, at, { reason: 'debit_declined', debit_at: notice?.debitAt.toISOString() ?? null });
      },
      undefined,
      { command: 'pause' },
      checkPausable,
    );
  }

  resume(ctx: Ctx, id: string): Promise<BillingSubscription> {
    return this.command(
      ctx,
      id,
      'resume',
      (gw, sub) => gw.resumeSubscription(sub.providerSubscriptionId!),
      (change) => applyResume(change),
      undefined,
      { command: 'resume' },
    );
  }

  /**
   * Cancels now, or at the end of the period (trial) with `atPeriodEnd`: then the status stays and the scheduler
   * cancels when the period ends (the gateway is told to stop charging then). A subscription not yet authorised has
   * no period: it is cancelled now either way. Paused, past_due and halted ones are cancelled now: deferring would stop
   * their dunning (one scheduled action) and leave the end to whenever the gateway says so.
   */
  cancel(ctx: Ctx, id: string, atPeriodEnd: boolean): Promise<BillingSubscription> {
    return this.command(
      ctx,
      id,
      'cancel',
      (gw, sub) =>
        sub.status === S.CREATED
          ? // Not authorised yet: a gateway subscription made at creation (Razorpay) is cancelled now; a Stripe checkout
            // completed later is cancelled when its event arrives (subscription.gateway-events.ts).
            sub.providerSubscriptionId
            ? gw.cancelSubscription(sub.providerSubscriptionId, { atPeriodEnd: false })
            : Promise.resolve()
          : // A halted subscription's gateway subscription was ended when it halted (stop_collection): done is done.
            // A change scheduled for the period's end is dropped first when the subscription goes on to that end
            // (an immediate cancellation ends the gateway subscription, and its schedule with it).
            (cancelDeferred(sub, atPeriodEnd) ? dropAtGateway(gw, sub) : Promise.resolve()).then(() =>
              endAtGateway(gw, sub.providerSubscriptionId!, cancelDeferred(sub, atPeriodEnd)),
            ),
      (change, now) => {
        dropScheduledChange(change, cancelDeferred(change.sub, atPeriodEnd) ? 'cancel_at_period_end' : 'cancel');
        applyCancel(change, now, atPeriodEnd);
      },
      // Already set to end: asking again changes nothing and needs no gateway call.
      (sub) => cancelDeferred(sub, atPeriodEnd) && sub.cancelAtPeriodEnd,
      { command: 'cancel', atPeriodEnd },
    );
  }

  async changePlan(ctx: Ctx, id: string, input: ChangePlanInput): Promise<ChangePlanResult> {
    if (input.effective === ChangeEffective.PERIOD_END) return scheduleChangeAtPeriodEnd(this, ctx, id, input);
    return changePlan(this, ctx, id, input);
  }

  /** What changePlan would do now, with nothing changed (change-plan.ts previewPlanChange). */
  previewPlanChange(ctx: Ctx, id: string, input: ChangePlanInput): Promise<PlanChangePreview> {
    return previewPlanChange(this, ctx, id, input);
  }

  removeScheduledChange(ctx: Ctx, id: string): Promise<BillingSubscription> {
    return removeScheduledChange(this, ctx, id);
  }

  removeScheduledCancellation(ctx: Ctx, id: string): Promise<BillingSubscription> {
    return removeScheduledCancellation(this, ctx, id);
  }

  createMandateSetup(ctx: Ctx, id: string, input: MandateSetupInput): Promise<MandateSetup> {
    return createMandateSetup(this, ctx, id, input);
  }

  /**
   * A command on one subscription, mirrored to the gateway outside any transaction: (1) under the row lock, check the
   * table and claim the subscription for this command (a concurrent command then answers 409); (2) call the gateway;
   * a refusal answers 502 and releases the claim, changing nothing; (3) under the lock again, apply the change with
   * its audit row and outbox event.
   */
  async command(
    ctx: Ctx,
    id: string,
    trigger: SubscriptionTrigger,
    atGateway: (gw: GatewayPort, sub: BillingSubscription) => Promise<void>,
    apply: (change: SubscriptionChange, now: Date) => void | Promise<void>,
    noop: (sub: BillingSubscription) => boolean = () => false,
    /** pause, resume, cancel: a gateway call without an answer leaves this pending on the subscription. */
    unanswered?: Omit<PendingOutcome, 'since'>,
    /** The command's own refusals (409) beyond the table's, checked with it before anything reaches the gateway. */
    guard?: (sub: BillingSubscription) => void,
  ): Promise<BillingSubscription> {
    const tenant = tenantOf(ctx);
    const claimed = await ctx.em.transactional(async (em) => {
      const sub = await findOr404(em, BillingSubscription, id, 'subscription', {
        lockMode: LockMode.PESSIMISTIC_WRITE,
      });
      transition(sub.status, trigger, 'api');
      if (noop(sub)) return { sub, skip: true };
      guard?.(sub);
      const inFlight = commandInFlight(sub);
      if (inFlight) {
        throw new DomainError(
          'invalid_state_transition',
          `Cannot ${trigger.replace(/_/g, ' ')} this subscription while another command (${inFlight.replace(/_/g, ' ')}) is in progress.`,
        );
      }
      sub.pendingCommand = trigger;
      sub.pendingCommandAt = new Date(); // wall time: claims expire by the wall clock
      await em.flush();
      return { sub, skip: false };
    });
    if (claimed.skip) return claimed.sub;
    const sub = claimed.sub;
    try {
      if (sub.providerSubscriptionId || sub.status === S.CREATED) {
        const connection = await this.connectionOf(ctx.em, sub);
        await atGateway(this.providers.gatewayFor(connection), sub);
      }
    } catch (err) {
      if (
        unanswered &&
        !(err instanceof GatewayError && err.code === 'gateway_rejected') &&
        !(err instanceof DomainError)
      ) {
        // No answer: the gateway may have done it. The command stays pending on the subscription (its claim held, so
        // no other command starts) until the gateway's event or reconciliation settles it (subscription.pending.ts).
        await this.leavePending(ctx.em, id, { ...unanswered, since: new Date().toISOString() });
        ctx.log.warn(
          { err, subscription_id: id, command: trigger },
          'gateway did not answer a subscription command: pending until its outcome is known',
        );
        throw fromGatewayError(err);
      }
      await this.release(ctx.em, id);
      ctx.log.warn({ err, subscription_id: id, command: trigger }, 'gateway refused a subscription command');
      throw fromGatewayError(err);
    }
    const now = await this.now(tenant);
    let applied: { locked: BillingSubscription; followUps: (() => Promise<void>)[] };
    try {
      applied = await ctx.em.transactional(async (em) => {
        const locked = await findOr404(em, BillingSubscription, id, 'subscription', {
          lockMode: LockMode.PESSIMISTIC_WRITE,
        });
        locked.pendingCommand = null;
        locked.pendingCommandAt = null;
        const change = this.change(em, locked);
        await apply(change, now);
        await change.save();
        return { locked, followUps: change.followUps };
      });
    } catch (err) {
      await this.release(ctx.em, id);
      throw err;
    }
    // Gateway calls the change leads to (e.g. collecting a plan change's adjustment), once it has committed.
    for (const f of applied.followUps) await f();
    return applied.locked;
  }

  private async leavePending(em: EntityManager, id: string, outcome: PendingOutcome): Promise<void> {
    await em.fork().transactional(async (tx) => {
      const sub = await tx.findOne(BillingSubscription, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!sub) return;
      sub.pendingOutcome = outcome;
      const change = this.change(tx, sub);
      await change.save(); // the live-update notice: the subscription shows the pending command
    });
  }

  private async release(em: EntityManager, id: string): Promise<void> {
    await em.fork().transactional(async (tx) => {
      const sub = await tx.findOne(BillingSubscription, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (sub) {
        sub.pendingCommand = null;
        sub.pendingCommandAt = null;
      }
    });
  }

  async connectionOf(em: EntityManager, sub: BillingSubscription): Promise<ProviderConnection> {
    const c = await em.findOne(ProviderConnection, { id: sub.connectionId }, { populate: ['credentialsSealed'] });
    if (!c)
      throw new DomainError(
        'provider_not_connected',
        `The ${sub.provider} connection of this subscription was removed.`,
      );
    return c;
  }

  /**
   * A gateway call after a commit whose scheduled action is leased (the dunning retry): a failure is logged, and the
   * action runs again when its lease ends. Other calls after a commit are durable commands (subscription.commands.ts).
   */
  async afterCommit(
    sub: BillingSubscription,
    what: string,
    call: (gw: GatewayPort) => Promise<unknown>,
  ): Promise<void> {
    try {
      const connection = await this.connectionOf(tenantEntityManager(this.root, sub), sub);
      await call(this.providers.gatewayFor(connection));
    } catch (err) {
      logger.warn({ err, subscription_id: sub.id, what }, 'gateway follow-up call failed');
    }
  }

  /**
   * Applies a verified gateway event about a subscription once (the (provider, event id) row is the guard), in one
   * transaction under the connection's tenant; gateway calls it leads to run after the commit. False: a repeat.
   */
  applyGatewayEvent(em: EntityManager, connection: ProviderConnection, event: GatewayEvent): Promise<boolean> {
    return receiveSubscriptionEvent(this, em, connection, event);
  }
}
