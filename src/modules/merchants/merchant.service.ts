import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import currencyCodes from 'currency-codes';
import { make, Mode } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
import { announce, Change } from '../../core/events';
import { ApiKey, Merchant } from './merchant.entities';

const KEY_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `sk_test_` / `sk_live_` followed by 40 random base62 characters (~238 bits). */
export function generateSecretKey(mode: Mode): string {
  const bytes = crypto.randomBytes(40);
  let out = '';
  for (const b of bytes) out += KEY_ALPHABET[b % 62]; // 256 % 62 bias is negligible at this length
  return `sk_${mode}_${out}`;
}

/** Keys are long random secrets, so a fast hash is enough and lets every request check its key cheaply. */
export const hashKey = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

export interface CreateMerchantData {
  name: string;
  gstin?: string | null;
  stateCode?: string | null;
  reportingCurrency?: string | null;
  rateLimitPerSecond?: number | null;
}

export interface IssuedKeys {
  merchant: Merchant;
  apiKeys: { test: string; live: string };
}

/** A key as authentication sees it: its merchant, mode, id, and when it stops working (ms since epoch; null: never). */
export interface KeyHolder {
  merchant: Merchant;
  mode: Mode;
  apiKeyId: string;
  expiresAt: number | null;
}

/** Past this many retired keys, an `api_key` change names none and means every key of the merchant and mode but the new one. */
const MAX_LISTED_KEYS = 100;

/** Keys a roll retired, as announced in an `api_key` change (so every process can drop and cut them). */
export interface KeyRetirement {
  merchantId: string;
  mode: Mode;
  /** The change's `id`: the new key of a roll (never retired when `keyIds` is null). */
  issuedId: string;
  /** The retired keys; null: every key of the merchant and mode but `issuedId`. */
  keyIds: ReadonlySet<string> | null;
  expiresAt: number;
}

export function keyRetirement(change: Change): KeyRetirement | null {
  const expiresAt = change.expiresAt ? Date.parse(change.expiresAt) : NaN;
  if (change.topic !== 'api_key' || Number.isNaN(expiresAt)) return null;
  return {
    merchantId: change.merchantId,
    mode: change.mode,
    issuedId: change.id,
    keyIds: change.keyIds ? new Set(change.keyIds) : null,
    expiresAt,
  };
}

export const retires = (r: KeyRetirement, key: { merchantId: string; mode: Mode; apiKeyId: string }) =>
  key.merchantId === r.merchantId &&
  key.mode === r.mode &&
  (r.keyIds ? r.keyIds.has(key.apiKeyId) : key.apiKeyId !== r.issuedId);

interface CachedKey {
  merchant: Merchant;
  mode: Mode;
  apiKeyId: string;
  expiresAt: number | null;
  cachedUntil: number;
}

/** Merchants and their secret keys. Works on an EntityManager without a tenant (operator and auth paths). */
export class MerchantService {
  /** Lookups by key hash; short-lived so a key rolled by another process stops working within seconds. */
  private cache = new Map<string, CachedKey>();
  private static CACHE_MS = 5_000;

  constructor(private readonly root: EntityManager) {}

  async create(data: CreateMerchantData): Promise<IssuedKeys> {
    const name = data.name?.trim();
    if (!name) throw new DomainError('parameter_missing', 'Missing required parameter: name', 'name');
    if (data.stateCode != null && !/^\d{2}$/.test(data.stateCode)) {
      throw invalid('state_code', 'state_code must be a 2-digit GST state code.');
    }
    if (data.gstin != null && !/^\d{2}[A-Z0-9]{13}$/.test(data.gstin)) {
      throw invalid('gstin', 'gstin must be a 15-character GSTIN.');
    }
    const currency = (data.reportingCurrency ?? 'INR').toUpperCase();
    if (!currencyCodes.code(currency)) throw invalid('reporting_currency', `Unknown currency: ${data.reportingCurrency}`);
    if (data.rateLimitPerSecond != null && (!Number.isInteger(data.rateLimitPerSecond) || data.rateLimitPerSecond < 1)) {
      throw invalid('rate_limit_per_second', 'rate_limit_per_second must be a positive integer.');
    }
    const em = this.root.fork();
    const merchant = make(Merchant, {
      name,
      gstin: data.gstin ?? null,
      stateCode: data.stateCode ?? data.gstin?.slice(0, 2) ?? null,
      reportingCurrency: currency,
      rateLimitPerSecond: data.rateLimitPerSecond ?? null,
    });
    em.persist(merchant);
    const test = generateSecretKey(Mode.TEST);
    const live = generateSecretKey(Mode.LIVE);
    em.persist(make(ApiKey, { merchantId: merchant.id, mode: Mode.TEST, keyHash: hashKey(test), last4: test.slice(-4) }));
    em.persist(make(ApiKey, { merchantId: merchant.id, mode: Mode.LIVE, keyHash: hashKey(live), last4: live.slice(-4) }));
    await em.flush();
    return { merchant, apiKeys: { test, live } };
  }

  /** The merchant and mode a secret key stands for, or null for an unknown, expired or malformed key. */
  async authenticate(key: string): Promise<KeyHolder | null> {
    if (!/^sk_(test|live)_[0-9A-Za-z]{32,}$/.test(key)) return null;
    const hash = hashKey(key);
    const now = Date.now();
    let hit = this.cache.get(hash);
    if (!hit || hit.cachedUntil < now) {
      const em = this.root.fork();
      const row = await em.findOne(ApiKey, { keyHash: hash });
      const merchant = row && (await em.findOne(Merchant, { id: row.merchantId }));
      if (!row || !merchant) {
        this.cache.delete(hash);
        return null;
      }
      hit = {
        merchant,
        mode: row.mode,
        apiKeyId: row.id,
        expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
        cachedUntil: now + MerchantService.CACHE_MS,
      };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, hit);
    }
    if (hit.expiresAt !== null && hit.expiresAt <= now) return null;
    return { merchant: hit.merchant, mode: hit.mode, apiKeyId: hit.apiKeyId, expiresAt: hit.expiresAt };
  }

  /** Drops cached lookups of retired keys: every process does so on the roll's `api_key` change. */
  forgetRetired(r: KeyRetirement): void {
    for (const [hash, hit] of this.cache) {
      if (retires(r, { merchantId: hit.merchant.id, mode: hit.mode, apiKeyId: hit.apiKeyId })) this.cache.delete(hash);
    }
  }

  /**
   * Issues a new key for the merchant and mode and retires the given one (or every current one) after
   * `graceSeconds` (0: at once). Runs in one transaction: a failure leaves the old key working. The commit announces
   * an `api_key` change, so every process drops the retired keys from its cache and cuts their open WebSockets.
   */
  async rollKey(merchantId: string, mode: Mode, opts: { apiKeyId?: string; graceSeconds?: number } = {}) {
    const grace = opts.graceSeconds ?? 0;
    if (!Number.isInteger(grace) || grace < 0 || grace > 7 * 24 * 3600) {
      throw invalid('grace_seconds', 'grace_seconds must be an integer between 0 and 604800.');
    }
    const key = generateSecretKey(mode);
    const expiresAt = new Date(Date.now() + grace * 1000);
    const row = await this.root.fork().transactional(async (em) => {
      const where = opts.apiKeyId
        ? { id: opts.apiKeyId, merchantId, mode }
        : { merchantId, mode, $or: [{ expiresAt: null }, { expiresAt: { $gt: expiresAt } }] };
      const old = await em.find(ApiKey, where);
      for (const k of old) {
        k.expiresAt = expiresAt;
        this.cache.delete(k.keyHash);
      }
      const fresh = make(ApiKey, { merchantId, mode, keyHash: hashKey(key), last4: key.slice(-4) });
      em.persist(fresh);
      // A NOTIFY payload holds at most 8000 bytes: a long list is left out (it then means every other key).
      const keyIds = old.length <= MAX_LISTED_KEYS ? old.map((k) => k.id) : undefined;
      await announce(em, { topic: 'api_key', merchantId, mode, id: fresh.id, keyIds, expiresAt: expiresAt.toISOString() });
      return fresh;
    });
    return { secretKey: key, apiKey: row, previousKeyExpiresAt: expiresAt };
  }
}
