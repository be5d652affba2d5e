/**
 * The sandbox's test instruments (contract 9 and 14): which cards and VPAs decline at checkout and which
 * authorise but fail later charges. "Later charges" count every charge after the mandate was authorised:
 * renewals (including the charge at trial end) and retries, the first being attempt 1.
 */
export type Method = 'card' | 'upi' | 'emandate';
export const METHODS: Method[] = ['card', 'upi', 'emandate'];
export type Outcome = 'success' | 'failure' | 'cancel';
export const OUTCOMES: Outcome[] = ['success', 'failure', 'cancel'];

export interface Instrument {
  method: Method;
  bank: string | null;
  cardNumber: string | null;
  vpa: string | null;
}

export const DEFAULT_CARD = '4242424242424242';

const key = (i: Instrument) => (i.vpa ? i.vpa.trim().toLowerCase() : (i.cardNumber ?? '').replace(/[\s-]/g, ''));

/** Declined at the checkout itself (outcome success notwithstanding). */
export function checkoutDecline(i: Instrument): string | null {
  const k = key(i);
  return k === '4000000000000002' || k === 'declined@sandbox' ? 'card_declined' : null;
}

/** Why the `attempt`-th charge after authorisation fails, or null when it succeeds. */
export function laterChargeFailure(i: Instrument, attempt: number): string | null {
  const k = key(i);
  if (k === '4000000000000341' || k === 'failure@sandbox') return 'insufficient_funds';
  if (k === '4000000000009979' && attempt === 1) return 'stolen_card';
  if (k === '4000000000000119' && attempt === 1) return 'processing_error';
  return null;
}

/** Hard declines end a subscription's dunning at once. */
export const HARD_DECLINES = new Set(['stolen_card', 'lost_card', 'mandate_revoked', 'account_closed']);

export function last4(i: Instrument): string | null {
  const digits = (i.cardNumber ?? '').replace(/\D/g, '');
  return digits.length >= 4 ? digits.slice(-4) : null;
}
