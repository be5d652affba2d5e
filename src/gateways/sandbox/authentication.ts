import express, { Request, Response, Router } from 'express';
import { LockMode } from '@mikro-orm/core';
import { esc, money } from './checkout';
import { retryRazorpayCharge } from './razorpay.billing';
import { SandboxObject } from './sandbox.entities';
import type { Sandbox } from './sandbox';
import { payStripeInvoice } from './stripe.billing';

/**
 * The page where a customer authenticates a mandate debit above its limit (docs/india.md): Stripe's hosted invoice
 * page, Razorpay's invoice short_url. GET shows the amount; POST is the customer's authentication: the invoice is
 * charged on the customer's session (no limit applies) and the gateway's events go out as for any paid invoice.
 */
export function authenticationRouter(sb: Sandbox): Router {
  const r = express.Router();
  r.get('/authenticate/:id', async (req: Request, res: Response) => {
    const invoice = await sb.orm.em.fork().findOne(SandboxObject, { id: String(req.params.id), type: 'invoice' });
    if (!invoice || !asksAuthentication(invoice)) {
      res.status(404).type('text/plain').send('No such authentication');
      return;
    }
    res.type('html').send(page(invoice));
  });
  r.post('/authenticate/:id', express.urlencoded({ extended: false }), async (req: Request, res: Response) => {
    const done = await sb.tx(async (em) => {
      const invoice = await em.findOne(
        SandboxObject,
        { id: String(req.params.id), type: 'invoice' },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!invoice || !asksAuthentication(invoice)) return null;
      if (!open(invoice)) return { events: [] as string[] }; // authenticated already: a second submit changes nothing
      const subId =
        invoice.provider === 'stripe'
          ? (invoice.data.parent?.subscription_details?.subscription as string)
          : (invoice.data.subscription_id as string);
      const sub = await em.findOne(
        SandboxObject,
        { id: subId, type: 'subscription', accountKey: invoice.accountKey },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!sub) return null;
      const now = await sb.now(invoice.accountKey);
      if (invoice.provider === 'stripe') return { events: payStripeInvoice(em, sub, invoice, now, true).events };
      return { events: (await retryRazorpayCharge(em, sub, now, true))?.events ?? [] };
    });
    if (!done) {
      res.status(404).type('text/plain').send('No such authentication');
      return;
    }
    await sb.deliver(done.events);
    res.type('html')
      .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authenticated</title></head>
<body><h1>Payment authenticated</h1><p>You can close this page.</p></body></html>`);
  });
  return r;
}

/** The gateway asked for authentication on this invoice: it carries the page's address. */
const asksAuthentication = (invoice: SandboxObject) =>
  String((invoice.provider === 'stripe' ? invoice.data.hosted_invoice_url : invoice.data.short_url) ?? '').includes(
    `/authenticate/${invoice.id}`,
  );

const open = (invoice: SandboxObject) => invoice.data.status === (invoice.provider === 'stripe' ? 'open' : 'issued');

function page(invoice: SandboxObject): string {
  const amount = invoice.provider === 'stripe' ? invoice.data.amount_due : invoice.data.amount;
  const body = open(invoice)
    ? `<p>Your bank asks you to approve this debit from your mandate: it is above the limit debited without your approval.</p>
<p class="amount">${esc(money(invoice.provider, Number(amount), String(invoice.data.currency)))}</p>
<form method="post" action="./${esc(invoice.id)}"><button type="submit">Authenticate and pay</button></form>`
    : '<p>This payment is authenticated already.</p>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authenticate payment - ${esc(invoice.provider)} sandbox</title></head><body>
<h1>Authenticate payment</h1>
${body}
</body></html>`;
}
