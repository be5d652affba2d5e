/**
 * The sandbox's test instruments (docs/sandbox.md): which cards and VPAs decline at checkout and which
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
  /** The customer revoked the mandate (the test helper revoke_mandate): every later charge fails. */
  revoked?: boolean;
}

export const DEFAULT_CARD = '4242424242424242';

const key = (i: Instrument) => (i.vpa ? i.vpa.trim().toLowerCase() : (i.cardNumber ?? '').replace(/[\s-]/g, ''));

/** Declined at the checkout itself (outcome success notwithstanding). */
export function checkoutDecline(i: Instrument): string | null {
  const k = key(i);
  return k === '4000000000000002' || k === 'declined@sandbox' ? 'card_declined' : null;
}

/** The RBI's limit for a recurring debit without the customer's authentication: INR 15,000, in paise. */
export const DEFAULT_AFA_LIMIT = 1_500_000;

/**
 * A later charge of an INR mandate above its limit is not debited: the customer must authenticate it (the failure
 * `authentication_required`, paid through the sandbox's authentication page, checkout.ts). The limit is the one the
 * subscription was created with (metadata / notes `mandate_afa_limit`, as Cadence sends it), else INR 15,000.
 */
export function needsAuthentication(currency: string, amount: number, limit: unknown): boolean {
  if (String(currency).toUpperCase() !== 'INR') return false;
  const n = Number(limit);
  return amount > (Number.isInteger(n) && n > 0 ? n : DEFAULT_AFA_LIMIT);
}

export const AUTHENTICATION_REQUIRED = 'authentication_required';

/** Where the sandbox's pages live, from one of its page URLs (`<publicUrl>/checkout/<id>`). */
export const pageBase = (pageUrl: string) => pageUrl.slice(0, pageUrl.lastIndexOf('/checkout/'));

/**
 * Why a later debit of a mandate fails, or null when it succeeds: above the subscription's limit it waits for the
 * customer's authentication (unless `onSession`: the authentication page, or a debit the limit does not cover), else
 * the card rules (laterChargeFailure) decide.
 */
export function laterDebitFailure(
  i: Instrument,
  attempt: number,
  debit: { currency: string; amount: number; limit: unknown; onSession?: boolean; validUntil?: unknown; at?: number },
): string | null {
  if (!debit.onSession && mandateExpired(debit.validUntil, debit.at)) return 'mandate_expired';
  if (!debit.onSession && needsAuthentication(debit.currency, debit.amount, debit.limit))
    return AUTHENTICATION_REQUIRED;
  return laterChargeFailure(i, attempt);
}

/**
 * Past the `mandate_valid_until` (unix seconds) the subscription was registered with, the mandate debits nothing more
 * (docs/india.md "Mandates"). A debit above its `mandate_max_amount` needs the customer's authentication, as one above
 * the limit does: the maximum is never below the limit, so needsAuthentication covers it.
 */
function mandateExpired(validUntil: unknown, at: number | undefined): boolean {
  const until = Number(validUntil);
  return at != null && Number.isInteger(until) && until > 0 && at > until;
}

/** Why the `attempt`-th charge after authorisation fails, or null when it succeeds. */
export function laterChargeFailure(i: Instrument, attempt: number): string | null {
  if (i.revoked) return 'mandate_revoked';
  const k = key(i);
  if (k === '4000000000000341' || k === 'failure@sandbox') return 'insufficient_funds';
  if (k === '4000000000009979' && attempt === 1) return 'stolen_card';
  if (k === '4000000000000119' && attempt === 1) return 'processing_error';
  return null;
}

/** Hard declines end a subscription's dunning at once. */
export const HARD_DECLINES = new Set([
  'stolen_card',
  'lost_card',
  'mandate_revoked',
  'mandate_expired',
  'account_closed',
]);

/**
 * The issuing bank of the sandbox's test cards, by BIN (the first six digits), so a card checkout reports a bank
 * without one typed in: 424242 (the default card) HDFC, 400000 (the 4000 0000 0000 xxxx decline and renewal-failure
 * cards) ICICI, 411111 AXIS, 510510 SBI, 555555 KOTAK. A bank typed on the form wins.
 */
export const CARD_ISSUERS: Record<string, string> = {
  '424242': 'HDFC',
  '400000': 'ICICI',
  '411111': 'AXIS',
  '510510': 'SBI',
  '555555': 'KOTAK',
};

/** The bank the gateway reports for an instrument: the form's, else a card's issuer by BIN; UPI names none (the VPA does). */
export function bankOf(i: Instrument): string | null {
  if (i.bank) return i.bank;
  if (i.method !== 'card') return null;
  const digits = (i.cardNumber ?? '').replace(/\D/g, '');
  return CARD_ISSUERS[digits.slice(0, 6)] ?? null;
}

/** The card network by the first digit (the sandbox's cards are Visa and Mastercard; 6 is RuPay in India). */
export function cardNetwork(i: Instrument): { brand: string; network: string } {
  const first = (i.cardNumber ?? '').replace(/\D/g, '')[0];
  if (first === '5' || first === '2') return { brand: 'mastercard', network: 'MasterCard' };
  if (first === '6') return { brand: 'rupay', network: 'RuPay' };
  return { brand: 'visa', network: 'Visa' };
}

export function last4(i: Instrument): string | null {
  const digits = (i.cardNumber ?? '').replace(/\D/g, '');
  return digits.length >= 4 ? digits.slice(-4) : null;
}
