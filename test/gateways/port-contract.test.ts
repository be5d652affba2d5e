import crypto from 'node:crypto';
import { createGateway, GatewayError } from '../../src/gateways';
import { sandboxAccountKey } from '../../src/gateways/sandbox';
import { closedPortUrl, submitCheckout, redirectOf } from '../harness';
import { ADAPTERS, SubscriptionInput, useAdapter } from './adapters';

/**
 * The gateway port (src/gateways/port.ts) as the service relies on it, the same for every adapter: run against
 * each adapter and the sandbox. What only one provider does lives in its own file (stripe.test.ts, razorpay.test.ts).
 */
describe.each(ADAPTERS)('$provider adapter: the gateway port', (profile) => {
  const a = useAdapter(profile);
  const filter = () => ({ accountKey: sandboxAccountKey(profile.provider, a.credentials) });

  it('replays an idempotent create and refuses the key with other parameters', async () => {
    const input = a.paymentInput();
    const [first, second] = await Promise.all([a.gw.createPaymentCheckout(input), a.gw.createPaymentCheckout(input)]);
    expect(second.checkoutSessionId).toBe(first.checkoutSessionId);
    await expect(a.gw.createPaymentCheckout({ ...input, amount: 100000 })).rejects.toMatchObject({
      code: 'gateway_rejected',
    });
  });

  it('rejects bad credentials', async () => {
    for (const credentials of profile.badCredentials(a.credentials)) {
      const bad = createGateway(profile.provider, credentials, { sandboxUrl: a.env.sandbox.url });
      await expect(bad.verifyCredentials()).rejects.toMatchObject({ name: 'GatewayError', code: 'gateway_rejected' });
      await expect(bad.createPaymentCheckout(a.paymentInput())).rejects.toMatchObject({ code: 'gateway_rejected' });
    }
  });

  it('rejects an event whose body was changed or that another webhook secret signed', async () => {
    const c = await a.gw.createPaymentCheckout(a.paymentInput());
    await submitCheckout(c.checkoutUrl, { outcome: 'success' });
    const [delivery] = a.env.receiver.take();
    const tampered = Buffer.from(profile.tamper(delivery.body));
    expect(() => a.gw.parseEvent(tampered, delivery.headers)).toThrow(
      expect.objectContaining({ code: 'signature_invalid' }),
    );
    const other = createGateway(
      profile.provider,
      { ...a.credentials, webhook_secret: `whsec_${crypto.randomBytes(8).toString('hex')}` },
      { sandboxUrl: a.env.sandbox.url },
    );
    expect(() => other.parseEvent(delivery.raw, delivery.headers)).toThrow(GatewayError);
  });

  it('reports a sandbox that is down as gateway_unavailable, quickly', async () => {
    const down = createGateway(profile.provider, a.credentials, { sandboxUrl: await closedPortUrl(), timeoutMs: 2000 });
    const t0 = Date.now();
    await expect(down.createPaymentCheckout(a.paymentInput())).rejects.toMatchObject({ code: 'gateway_unavailable' });
    await expect(down.verifyCredentials()).rejects.toMatchObject({ code: 'gateway_unavailable' });
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  describe('subscriptions', () => {
    beforeAll(async () => {
      expect(await a.registerPrice()).toMatch(profile.priceId);
    });

    it('with a trial: authorised now, charged at trial end by chargeDueRenewals; pause, resume, cancel', async () => {
      const input = a.subscriptionInput({ trialDays: 7 });
      const c = await a.gw.createSubscriptionCheckout(input);
      const r = await submitCheckout(c.checkoutUrl, { outcome: 'success', ...profile.mandateForm });
      expect(r.location).toBe(profile.subscriptionSuccess.location(c.checkoutSessionId));
      const [auth, ...none] = a.events();
      expect(none).toHaveLength(0);
      expect(auth).toMatchObject({
        rawType: profile.authorizedRawType,
        kind: 'subscription.authorized',
        subscriptionId: input.subscriptionId,
        ...profile.mandateForm,
      });
      expect(auth.providerSubscriptionId).toMatch(/^sub_/);

      expect(await a.env.sandbox.chargeDueRenewals(new Date(Date.now() + 6 * 86_400_000), filter())).toEqual([]);
      expect(await a.env.sandbox.chargeDueRenewals(new Date(Date.now() + 8 * 86_400_000), filter())).toEqual([
        {
          provider: profile.provider,
          providerSubscriptionId: auth.providerSubscriptionId,
          events: profile.renewalEvents,
        },
      ]);
      expect(a.events()).toEqual([
        expect.objectContaining({
          kind: 'subscription.charged',
          subscriptionId: input.subscriptionId,
          providerSubscriptionId: auth.providerSubscriptionId,
          amount: 99900,
          currency: 'INR',
          method: profile.mandateForm.method,
        }),
      ]);

      // Pause, resume and cancel reach the gateway and come back as events.
      await a.gw.pauseSubscription(auth.providerSubscriptionId!);
      await a.gw.resumeSubscription(auth.providerSubscriptionId!);
      await a.gw.cancelSubscription(auth.providerSubscriptionId!, { atPeriodEnd: false });
      await a.env.sandbox.sandbox.settle();
      expect(a.events().map((e) => e.kind)).toEqual([
        'subscription.paused',
        'subscription.resumed',
        'subscription.cancelled',
      ]);
    });

    it('declined card cancels the subscription and redirects to the cancel URL', async () => {
      const d = a.subscriptionInput();
      const cd = await a.gw.createSubscriptionCheckout(d);
      expect(
        redirectOf(
          await submitCheckout(cd.checkoutUrl, { outcome: 'success', card_number: '4000000000000002', bank: 'AXIS' }),
        ),
      ).toEqual({
        status: 303,
        location: d.cancelUrl,
      });
      // The declined attempt's own event first, then the checkout's end.
      expect(a.events()).toEqual([
        expect.objectContaining({ rawType: profile.declinedAttempt.rawType, kind: profile.declinedAttempt.kind }),
        expect.objectContaining({
          kind: 'subscription.cancelled',
          subscriptionId: d.subscriptionId,
          failureReason: 'card_declined',
          method: 'card',
          bank: 'AXIS',
        }),
      ]);
    });

    // What the subscriptions engine relies on, through the adapter and the sandbox, the account's clock moved with
    // advanceTestClock (time order, webhooks delivered before it answers).
    const DAY = 86_400_000;
    const days = (from: Date | null | undefined, to: Date | null | undefined) =>
      (to!.getTime() - from!.getTime()) / DAY;

    /** Subscribes through the hosted checkout; answers the input, the checkout, its answer and the events it caused. */
    async function subscribe(
      over: Partial<SubscriptionInput> = {},
      form: Record<string, string> = { outcome: 'success' },
    ) {
      const input = a.subscriptionInput(over);
      const c = await a.gw.createSubscriptionCheckout(input);
      const r = await submitCheckout(c.checkoutUrl, form);
      const events = a.events();
      const id =
        events.find((e) => e.kind === 'subscription.authorized')?.providerSubscriptionId ??
        c.providerSubscriptionId ??
        '';
      return { input, c, r, events, id };
    }
    /** The events the receiver got since the last call about one subscription (others' renewals left aside). */
    const eventsOf = (id: string) => a.events().filter((e) => e.providerSubscriptionId === id);
    const settled = async (id: string) => {
      await a.env.sandbox.sandbox.settle();
      return eventsOf(id).filter((e) => e.kind !== 'ignored');
    };
    /** Ends a subscription a test made, so later advances do not renew it. */
    const end = async (id: string) => {
      await a.gw.cancelSubscription(id, { atPeriodEnd: false }).catch(() => undefined);
      await a.env.sandbox.sandbox.settle();
      a.events();
    };

    it('without a trial: authorised with its first period and charged (setup fee included) before the redirect; renewals by advanceTestClock', async () => {
      const before = await a.now();
      const s = await subscribe({ setupFee: 5000 }, { outcome: 'success', ...profile.mandateForm });
      expect(s.r.location).toBe(profile.subscriptionSuccess.location(s.c.checkoutSessionId));
      const [auth, first, ...rest] = s.events;
      expect(rest).toEqual([]);
      expect(auth).toMatchObject({
        rawType: profile.authorizedRawType,
        kind: 'subscription.authorized',
        subscriptionId: s.input.subscriptionId,
        trialEnd: null,
        ...profile.mandateForm,
      });
      expect(first).toMatchObject({
        rawType: profile.renewalEvents[0],
        kind: 'subscription.charged',
        providerSubscriptionId: s.id,
        amount: 104900,
        currency: 'INR',
        attempt: 1,
      });
      // The first period starts at the checkout (account time, to the second) and lasts a month; authorised and charged agree.
      expect(first.periodStart!.getTime()).toBeGreaterThanOrEqual(Math.floor(before.getTime() / 1000) * 1000);
      expect(first.periodStart!.getTime()).toBeLessThanOrEqual((await a.now()).getTime());
      expect(days(first.periodStart, first.periodEnd)).toBeGreaterThanOrEqual(28);
      expect(days(first.periodStart, first.periodEnd)).toBeLessThanOrEqual(31);
      expect({ start: auth.periodStart, end: auth.periodEnd }).toEqual({
        start: first.periodStart,
        end: first.periodEnd,
      });
      expect(await a.gw.getSubscription(s.id)).toEqual({
        status: 'active',
        currentPeriodStart: first.periodStart,
        currentPeriodEnd: first.periodEnd,
        trialEnd: null,
        cancelAtPeriodEnd: false,
        latestCharge: {
          status: 'succeeded',
          failureReason: null,
          periodStart: first.periodStart,
          periodEnd: first.periodEnd,
          amount: 104900,
        },
      });

      // A second before the period ends nothing is due; at its end the next period is charged, the fee not again.
      await a.gw.advanceTestClock(new Date(first.periodEnd!.getTime() - 1000));
      expect(eventsOf(s.id)).toEqual([]);
      await a.gw.advanceTestClock(first.periodEnd!);
      const [second, ...more] = eventsOf(s.id);
      expect(more).toEqual([]);
      expect(second).toMatchObject({
        kind: 'subscription.charged',
        amount: 99900,
        attempt: 1,
        periodStart: first.periodEnd,
        occurredAt: first.periodEnd,
      });
      expect((await a.now()).getTime()).toBeGreaterThanOrEqual(first.periodEnd!.getTime());

      // Cancelled now: a running subscription's end, not a failed checkout.
      await a.gw.cancelSubscription(s.id, { atPeriodEnd: false });
      expect(await settled(s.id)).toEqual([
        expect.objectContaining({
          rawType: profile.cancelledRawType.running,
          kind: 'subscription.cancelled',
          checkoutFailed: false,
        }),
      ]);
      expect(await a.gw.getSubscription(s.id)).toMatchObject({
        status: 'cancelled',
        latestCharge: { status: 'succeeded', periodStart: second.periodStart },
      });
    });

    it('with a trial: authorised with the trial end, nothing charged before it; the first charge (with the setup fee) at its end', async () => {
      const before = await a.now();
      const s = await subscribe(
        { trialDays: 7, setupFee: 5000 },
        { outcome: 'success', method: 'card', card_number: '4242424242424242' },
      );
      const [auth, ...rest] = s.events;
      expect(rest).toEqual([]);
      expect(auth).toMatchObject({ kind: 'subscription.authorized', periodStart: null, periodEnd: null });
      // The trial runs 7 days from the checkout on the account's clock (to the second).
      expect(days(before, auth.trialEnd)).toBeGreaterThanOrEqual(7 - 2 / 86_400);
      expect(days(await a.now(), auth.trialEnd)).toBeLessThanOrEqual(7);
      expect(await a.gw.getSubscription(s.id)).toMatchObject({
        status: 'trialing',
        trialEnd: auth.trialEnd,
        cancelAtPeriodEnd: false,
        latestCharge: null,
      });
      expect(await a.gw.retrySubscriptionCharge(s.id, crypto.randomUUID())).toEqual({
        outcome: 'nothing_due',
        failureReason: null,
      });

      await a.gw.advanceTestClock(new Date(auth.trialEnd!.getTime() - 1000));
      expect(eventsOf(s.id)).toEqual([]);
      await a.gw.advanceTestClock(auth.trialEnd!);
      const [first, ...more] = eventsOf(s.id);
      expect(more).toEqual([]);
      expect(first).toMatchObject({
        kind: 'subscription.charged',
        amount: 104900,
        attempt: 1,
        periodStart: auth.trialEnd,
      });
      expect(days(first.periodStart, first.periodEnd)).toBeGreaterThanOrEqual(28);
      expect(await a.gw.getSubscription(s.id)).toMatchObject({
        status: 'active',
        currentPeriodStart: auth.trialEnd,
        currentPeriodEnd: first.periodEnd,
        latestCharge: { status: 'succeeded', amount: 104900, periodStart: auth.trialEnd, periodEnd: first.periodEnd },
      });
      await a.gw.advanceTestClock(first.periodEnd!);
      expect(eventsOf(s.id)).toEqual([
        expect.objectContaining({ kind: 'subscription.charged', amount: 99900, periodStart: first.periodEnd }),
      ]);
      await end(s.id);
    });

    it('cancel at period end during a trial: cancelled at the trial end, nothing charged', async () => {
      const s = await subscribe({ trialDays: 3 });
      const trialEnd = s.events[0].trialEnd!;
      await a.gw.cancelSubscription(s.id, { atPeriodEnd: true });
      expect(await settled(s.id)).toEqual([]);
      expect(await a.gw.getSubscription(s.id)).toMatchObject({ status: 'trialing', cancelAtPeriodEnd: true, trialEnd });
      await a.gw.advanceTestClock(new Date(trialEnd.getTime() + 40 * DAY));
      expect(eventsOf(s.id)).toEqual([
        expect.objectContaining({
          rawType: profile.cancelledRawType.running,
          kind: 'subscription.cancelled',
          checkoutFailed: false,
          occurredAt: trialEnd,
        }),
      ]);
      expect(await a.gw.getSubscription(s.id)).toMatchObject({ status: 'cancelled', latestCharge: null });
    });

    it('max_cycles: passed to the gateway where it has a term (Razorpay total_count); Stripe renews until told to stop', async () => {
      const s = await subscribe({ maxCycles: 2 });
      const first = s.events[1];
      await a.gw.advanceTestClock(first.periodEnd!);
      const second = eventsOf(s.id);
      expect(second.map((e) => e.kind)).toEqual(
        profile.endsAfterMaxCycles ? ['subscription.charged', 'subscription.completed'] : ['subscription.charged'],
      );
      expect(second[0]).toMatchObject({ periodStart: first.periodEnd });
      if (!profile.endsAfterMaxCycles) {
        // The engine tells Stripe to stop at the last period's end: no third charge, the subscription ends then.
        await a.gw.cancelSubscription(s.id, { atPeriodEnd: true });
        await settled(s.id);
      }
      expect(await a.gw.getSubscription(s.id)).toMatchObject({
        status: profile.endsAfterMaxCycles ? 'completed' : 'active',
        currentPeriodEnd: second[0].periodEnd,
      });
      await a.gw.advanceTestClock(new Date(second[0].periodEnd!.getTime() + 40 * DAY));
      expect(eventsOf(s.id).map((e) => e.kind)).toEqual(profile.endsAfterMaxCycles ? [] : ['subscription.cancelled']);
    });

    it.each([
      ['outcome failure', { outcome: 'failure' }, 'payment_failed'],
      ['outcome cancel', { outcome: 'cancel' }, null],
      ['declined card 4000000000000002', { outcome: 'success', card_number: '4000000000000002' }, 'card_declined'],
      [
        'declined VPA declined@sandbox',
        { outcome: 'success', method: 'upi', vpa: 'declined@sandbox' },
        'card_declined',
      ],
    ])(
      'checkout %s: signed subscription.cancelled (checkoutFailed) delivered before the 303 to cancel_url',
      async (_name, form, reason) => {
        const s = await subscribe({}, form as Record<string, string>);
        expect(redirectOf(s.r)).toEqual({ status: 303, location: s.input.cancelUrl });
        expect(s.events).toEqual([
          // A declined attempt reports itself first; a checkout cancelled by the buyer made none.
          ...(reason
            ? [
                expect.objectContaining({
                  rawType: profile.declinedAttempt.rawType,
                  kind: profile.declinedAttempt.kind,
                }),
              ]
            : []),
          expect.objectContaining({
            rawType: profile.cancelledRawType.checkout,
            kind: 'subscription.cancelled',
            subscriptionId: s.input.subscriptionId,
            checkoutFailed: true,
            failureReason: reason,
          }),
        ]);
      },
    );

    /** The sandbox's instruments for later charges (docs/sandbox.md), with each payment method. */
    const LATER_CHARGES: {
      instrument: string;
      form: Record<string, string>;
      renewal: string | null;
      retry: string | null;
    }[] = [
      {
        instrument: 'card 4000000000000341',
        form: { method: 'card', card_number: '4000000000000341' },
        renewal: 'insufficient_funds',
        retry: 'insufficient_funds',
      },
      {
        instrument: 'UPI failure@sandbox',
        form: { method: 'upi', vpa: 'failure@sandbox' },
        renewal: 'insufficient_funds',
        retry: 'insufficient_funds',
      },
      {
        instrument: 'e-mandate 4000000000000341',
        form: { method: 'emandate', bank: 'HDFC', card_number: '4000000000000341' },
        renewal: 'insufficient_funds',
        retry: 'insufficient_funds',
      },
      {
        instrument: 'card 4000000000009979',
        form: { method: 'card', card_number: '4000000000009979' },
        renewal: 'stolen_card',
        retry: null,
      },
      {
        instrument: 'card 4000000000000119',
        form: { method: 'card', card_number: '4000000000000119' },
        renewal: 'processing_error',
        retry: null,
      },
      { instrument: 'an ordinary VPA', form: { method: 'upi', vpa: 'buyer@okaxis' }, renewal: null, retry: null },
      {
        instrument: 'e-mandate 4000000000000119',
        form: { method: 'emandate', bank: 'SBI', card_number: '4000000000000119' },
        renewal: 'processing_error',
        retry: null,
      },
    ];
    describe.each(LATER_CHARGES)('later charges with $instrument', ({ form, renewal, retry }) => {
      it(`renewal ${renewal ?? 'succeeds'}; a retry (retrySubscriptionCharge) ${retry ?? 'succeeds'}, its webhook delivered before it answers`, async () => {
        const s = await subscribe({}, { outcome: 'success', ...form });
        const [auth, first] = s.events;
        expect(auth).toMatchObject({ kind: 'subscription.authorized', method: form.method });
        expect(first).toMatchObject({ kind: 'subscription.charged', amount: 99900 }); // the checkout's own charge passes
        await a.gw.advanceTestClock(first.periodEnd!);
        const [renewed, ...rest] = eventsOf(s.id);
        expect(rest).toEqual([]);
        if (!renewal) {
          expect(renewed).toMatchObject({
            kind: 'subscription.charged',
            attempt: 1,
            periodStart: first.periodEnd,
            method: form.method,
          });
          expect(await a.gw.retrySubscriptionCharge(s.id, crypto.randomUUID())).toEqual({
            outcome: 'nothing_due',
            failureReason: null,
          });
          await end(s.id);
          return;
        }
        expect(renewed).toMatchObject({
          rawType: profile.failedRawType(renewal),
          kind: 'subscription.charge_failed',
          failureReason: renewal,
          attempt: 1,
          amount: 99900,
          periodStart: first.periodEnd,
          method: form.method,
        });
        expect(await a.gw.getSubscription(s.id)).toMatchObject({
          status: profile.failedStatus(renewal),
          currentPeriodStart: renewed.periodStart,
          latestCharge: {
            status: 'failed',
            failureReason: renewal,
            periodStart: renewed.periodStart,
            periodEnd: renewed.periodEnd,
            amount: 99900,
          },
        });

        const key = crypto.randomUUID();
        const outcome = await a.gw.retrySubscriptionCharge(s.id, key);
        expect(outcome).toEqual(
          retry ? { outcome: 'failed', failureReason: retry } : { outcome: 'succeeded', failureReason: null },
        );
        // Already received: the sandbox delivered the webhook (and had it answered) before answering the retry.
        expect(eventsOf(s.id)).toEqual([
          expect.objectContaining({
            kind: retry ? 'subscription.charge_failed' : 'subscription.charged',
            failureReason: retry,
            attempt: 2,
            periodStart: renewed.periodStart,
            periodEnd: renewed.periodEnd,
          }),
        ]);
        // The same key again charges nothing: a decline replays; after a success Razorpay replays it and Stripe
        // finds the invoice paid (nothing_due).
        const again = await a.gw.retrySubscriptionCharge(s.id, key);
        if (retry) expect(again).toEqual(outcome);
        else expect([outcome, { outcome: 'nothing_due', failureReason: null }]).toContainEqual(again);
        expect(eventsOf(s.id)).toEqual([]);
        if (retry) {
          expect(await a.gw.getSubscription(s.id)).toMatchObject({
            status: 'past_due',
            latestCharge: { status: 'failed', failureReason: retry },
          });
        } else {
          expect(await a.gw.getSubscription(s.id)).toMatchObject({
            status: 'active',
            latestCharge: { status: 'succeeded', periodStart: renewed.periodStart },
          });
          expect(await a.gw.retrySubscriptionCharge(s.id, crypto.randomUUID())).toEqual({
            outcome: 'nothing_due',
            failureReason: null,
          });
          // Card 0119 fails only its first later charge: the next renewal passes.
          await a.gw.advanceTestClock(renewed.periodEnd!);
          expect(eventsOf(s.id)).toEqual([
            expect.objectContaining({ kind: 'subscription.charged', attempt: 1, periodStart: renewed.periodEnd }),
          ]);
        }
        await end(s.id);
      });
    });

    it('pause: no charge while paused (the period still moves); resume; cancel at period end charges nothing more', async () => {
      const s = await subscribe();
      const first = s.events[1];
      await a.gw.pauseSubscription(s.id);
      expect((await settled(s.id)).map((e) => e.kind)).toEqual(['subscription.paused']);
      expect(await a.gw.getSubscription(s.id)).toMatchObject({ status: 'paused' });
      await a.gw.advanceTestClock(new Date(first.periodEnd!.getTime() + DAY));
      expect(eventsOf(s.id)).toEqual([]);
      await a.gw.resumeSubscription(s.id);
      expect((await settled(s.id)).map((e) => e.kind)).toEqual(['subscription.resumed']);
      const resumed = await a.gw.getSubscription(s.id);
      expect(resumed).toMatchObject({
        status: 'active',
        currentPeriodStart: first.periodEnd,
        latestCharge: { periodStart: first.periodStart },
      });
      await a.gw.advanceTestClock(resumed.currentPeriodEnd!);
      expect(eventsOf(s.id)).toEqual([
        expect.objectContaining({ kind: 'subscription.charged', periodStart: resumed.currentPeriodEnd }),
      ]);

      await a.gw.cancelSubscription(s.id, { atPeriodEnd: true });
      await settled(s.id);
      const ending = await a.gw.getSubscription(s.id);
      expect(ending).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
      await a.gw.advanceTestClock(new Date(ending.currentPeriodEnd!.getTime() + 40 * DAY));
      expect(eventsOf(s.id)).toEqual([
        expect.objectContaining({
          kind: 'subscription.cancelled',
          checkoutFailed: false,
          occurredAt: ending.currentPeriodEnd,
        }),
      ]);
    });

    describe('changeSubscriptionPrice', () => {
      let monthly: string;
      let yearly: string;
      beforeAll(async () => {
        monthly = await a.registerPrice({ planName: 'Monthly plus', amount: 149900 });
        yearly = await a.registerPrice({ planName: 'Yearly', amount: 999900, frequency: 'yearly' });
      });
      const change = (id: string, providerPriceId: string, amount: number) =>
        a.gw.changeSubscriptionPrice({
          providerSubscriptionId: id,
          providerPriceId,
          amount,
          currency: 'INR',
          idempotencyKey: crypto.randomUUID(),
        });

      it('the same cadence keeps the period and charges the new amount from the next one; another cadence starts a period now', async () => {
        const s = await subscribe({}, { outcome: 'success', method: 'card' });
        const first = s.events[1];
        await change(s.id, monthly, 149900);
        expect(await a.gw.getSubscription(s.id)).toMatchObject({
          status: 'active',
          currentPeriodStart: first.periodStart,
          currentPeriodEnd: first.periodEnd,
        });
        await a.gw.advanceTestClock(first.periodEnd!);
        const [second] = eventsOf(s.id);
        expect(second).toMatchObject({ kind: 'subscription.charged', amount: 149900, periodStart: first.periodEnd });

        const at = await a.now();
        await change(s.id, yearly, 999900);
        const after = await a.gw.getSubscription(s.id);
        expect(Math.abs(after.currentPeriodStart!.getTime() - at.getTime())).toBeLessThan(2000);
        expect(days(after.currentPeriodStart, after.currentPeriodEnd)).toBeGreaterThanOrEqual(365);
        await a.gw.advanceTestClock(after.currentPeriodEnd!);
        expect(eventsOf(s.id).filter((e) => e.kind !== 'ignored')).toEqual([
          expect.objectContaining({
            kind: 'subscription.charged',
            amount: 999900,
            periodStart: after.currentPeriodEnd,
          }),
        ]);
        await end(s.id);
      });

      it.each([
        ['upi', { method: 'upi', vpa: 'buyer@okhdfc' }],
        ['emandate', { method: 'emandate', bank: 'HDFC' }],
      ])('a %s subscription: refused where the gateway refuses it (Razorpay), in its words', async (method, form) => {
        const s = await subscribe({}, { outcome: 'success', ...form });
        if (profile.planChangeRefused.includes(method)) {
          await expect(change(s.id, monthly, 149900)).rejects.toMatchObject({
            name: 'GatewayError',
            code: 'gateway_rejected',
            message: expect.stringMatching(/cannot be updated when payment mode is/i),
          });
        } else {
          await expect(change(s.id, monthly, 149900)).resolves.toBeUndefined();
        }
        await end(s.id);
      });
    });
  });

  it('against the real gateway: no test clock (gateway_rejected), and Razorpay leaves retries to its own schedule', async () => {
    const real = createGateway(profile.provider, a.credentials, {});
    await expect(real.advanceTestClock(new Date())).rejects.toMatchObject({
      name: 'GatewayError',
      code: 'gateway_rejected',
    });
    if (profile.provider === 'razorpay') {
      expect(await real.retrySubscriptionCharge('sub_anything', 'key')).toEqual({
        outcome: 'nothing_due',
        failureReason: null,
      });
    }
  });
});
