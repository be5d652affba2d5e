import crypto from 'node:crypto';
import type { Credentials, ProviderName, RazorpayCredentials, StripeCredentials } from '../port';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A gateway-style id: prefix plus random base62 (cs_test_a1B2..., pay_Q3x...). */
export function gid(prefix: string, length = 24): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return `${prefix}${out}`;
}

/** The sandbox's account for an API key: a hash, so keys are never stored. */
export function accountKeyOf(provider: ProviderName, apiKey: string): string {
  return `${provider}_${crypto.createHash('sha256').update(apiKey).digest('hex').slice(0, 32)}`;
}

/** The sandbox account a connection's credentials map to (for filters such as chargeDueRenewals). */
export function sandboxAccountKey(provider: ProviderName, credentials: Credentials): string {
  return provider === 'stripe'
    ? accountKeyOf('stripe', (credentials as StripeCredentials).secret_key)
    : accountKeyOf('razorpay', (credentials as RazorpayCredentials).key_id);
}

export const unix = (d: Date | number = Date.now()) => Math.floor((typeof d === 'number' ? d : d.getTime()) / 1000);
