import { request, HttpResult } from './app';

export interface CheckoutAnswer extends HttpResult {
  /** The 303 target (success or cancel URL), if any. */
  location: string | null;
}

/** Posts the sandbox's hosted checkout form as a browser would (form-encoded), or as JSON; answers the raw result. */
export async function submitCheckout(
  checkoutUrl: string,
  form: Record<string, string> = { outcome: 'success' },
  as: 'form' | 'json' = 'form',
): Promise<CheckoutAnswer> {
  const r =
    as === 'json'
      ? await request(checkoutUrl, { method: 'POST', body: form })
      : await request(checkoutUrl, {
          method: 'POST',
          rawBody: new URLSearchParams(form).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
  return { ...r, location: r.headers.get('location') };
}

/** Status and redirect of a checkout answer: what a browser acts on. */
export const redirectOf = (r: CheckoutAnswer) => ({ status: r.status, location: r.location });

/**
 * How a buyer pays at the sandbox's hosted checkout (docs/sandbox.md): UPI with a VPA, a card, or an e-mandate with a
 * bank.
 */
export type CheckoutInstrument =
  | { method: 'upi'; vpa: string; bank?: string }
  | { method: 'card'; card_number?: string; bank?: string }
  | { method: 'emandate'; bank: string };

/** The checkout form for an instrument and outcome (default success), for submitCheckout. */
export function checkoutForm(
  instrument: CheckoutInstrument,
  outcome: 'success' | 'failure' | 'cancel' = 'success',
): Record<string, string> {
  const form: Record<string, string> = { outcome };
  for (const [k, v] of Object.entries(instrument)) if (v !== undefined) form[k] = v;
  return form;
}
