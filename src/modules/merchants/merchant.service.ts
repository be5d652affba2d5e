import crypto from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import currencyCodes from 'currency-codes';
import { make, Mode } from '../../core/entity';
import { validate as isUuid } from 'uuid';
import { DomainError, invalid, notFound } from '../../core/errors';
import { announce, Change } from '../../core/events';
import { ApiKey, Merchant } from './merchant.entities';
import { checkGstStateCode, normaliseGstin } from '../../core/gstin';

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

export interface CreateMerchantData extends TaxSettingsData {
  name: string;
  reportingCurrency?: string | null;
  rateLimitPerSecond?: number | null;
  /** Dunning: failed retries before a past_due subscription is halted (default 3). */
  maxRetries?: number | null;
}

export const MAX_RETRIES_LIMIT = 10;

/** The RBI's limit for a recurring debit without authentication: INR 15,000 (docs/india.md). */
export const DEFAULT_AFA_LIMIT = 1_500_000;
/** INR 10 lakh: above the highest category limit the RBI allows. */
const MAX_AFA_LIMIT = 100_000_000;

function validateMaxRetries(n: number | null | undefined): void {
  if (n != null && (!Number.isInteger(n) || n < 0 || n > MAX_RETRIES_LIMIT)) {
    throw invalid('max_retries', `max_retries must be an integer from 0 to ${MAX_RETRIES_LIMIT}.`);
  }
}

/**
 * GST settings invoices are issued with (docs/invoices-and-gst.md). In an update, an omitted field is kept and null
 * clears it.
 */
export interface TaxSettingsData {
  gstin?: string | null;
  stateCode?: string | null;
  /** 0..10000 basis points; null: the default, 18%. */
  taxRateBps?: number | null;
  sacCode?: string | null;
  address?: string | null;
  /** GST e-invoicing (docs/india.md); null: off. */
  eInvoicing?: boolean | null;
}

export const DEFAULT_TAX_RATE_BPS = 1800;
const MAX_ADDRESS_LENGTH = 500;

/**
 * Checks a merchant's complete tax settings, writing its GSTIN upper case: a GST state code, a GSTIN with a valid state
 * prefix and check character (src/modules/invoices/gstin.ts; its state the merchant's state code, when both are given), a rate of 0..10000 basis points, a SAC of 4 to 8
 * digits, an address of at most 500 characters, and e-invoicing only with a GSTIN and a SAC. 400 parameter_invalid naming
 * the field otherwise.
 */
export function validateTaxSettings(s: {
  gstin: string | null;
  stateCode: string | null;
  taxRateBps: number;
  sacCode: string | null;
  address: string | null;
  eInvoicing?: boolean;
}): void {
  if (s.gstin != null) s.gstin = normaliseGstin(s.gstin, 'gstin');
  if (s.stateCode != null) checkGstStateCode(s.stateCode, 'state_code');
  if (s.gstin != null && s.stateCode != null && s.gstin.slice(0, 2) !== s.stateCode) {
    throw invalid('state_code', `state_code must be the GSTIN's state code (${s.gstin.slice(0, 2)}).`);
  }
  if (!Number.isInteger(s.taxRateBps) || s.taxRateBps < 0 || s.taxRateBps > 10_000) {
    throw invalid('tax_rate_bps', 'tax_rate_bps must be an integer from 0 to 10000 (basis points: 1800 = 18%).');
  }
  if (s.sacCode != null && (typeof s.sacCode !== 'string' || !/^\d{4,8}$/.test(s.sacCode))) {
    throw invalid('sac_code', 'sac_code must be 4 to 8 digits.');
  }
  if (s.address != null && (typeof s.address !== 'string' || s.address.length > MAX_ADDRESS_LENGTH)) {
    throw invalid('address', `address must be at most ${MAX_ADDRESS_LENGTH} characters.`);
  }
  // The portal registers a document under the supplier's GSTIN and needs an HSN/SAC code on every line.
  if (s.eInvoicing && (s.gstin == null || s.sacCode == null)) {
    throw invalid('e_invoicing', "e_invoicing needs the merchant's gstin and sac_code.");
  }
}

/** A blank address is no address. */
const cleanAddress = (a: string | null | undefined) => (typeof a === 'string' ? a.trim() || null : (a ?? null));

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
    const tax = {
      gstin: data.gstin ?? null,
      stateCode: data.stateCode ?? data.gstin?.slice(0, 2) ?? null,
      taxRateBps: data.taxRateBps ?? DEFAULT_TAX_RATE_BPS,
      sacCode: data.sacCode ?? null,
      address: cleanAddress(data.address),
    };
    validateTaxSettings(tax);
    const currency = (data.reportingCurrency ?? 'INR').toUpperCase();
    if (!currencyCodes.code(currency))
      throw invalid('reporting_currency', `Unknown currency: ${data.reportingCurrency}`);
    if (
      data.rateLimitPerSecond != null &&
      (!Number.isInteger(data.rateLimitPerSecond) || data.rateLimitPerSecond < 1)
    ) {
      throw invalid('rate_limit_per_second', 'rate_limit_per_second must be a positive integer.');
    }
    validateMaxRetries(data.maxRetries);
    const em = this.root.fork();
    const merchant = make(Merchant, {
      name,
      ...tax,
      reportingCurrency: currency,
      rateLimitPerSecond: data.rateLimitPerSecond ?? null,
      maxRetries: data.maxRetries ?? 3,
    });
    em.persist(merchant);
    const test = generateSecretKey(Mode.TEST);
    const live = generateSecretKey(Mode.LIVE);
    em.persist(
      make(ApiKey, { merchantId: merchant.id, mode: Mode.TEST, keyHash: hashKey(test), last4: test.slice(-4) }),
    );
    em.persist(
      make(ApiKey, { merchantId: merchant.id, mode: Mode.LIVE, keyHash: hashKey(live), last4: live.slice(-4) }),
    );
    await em.flush();
    return { merchant, apiKeys: { test, live } };
  }

  /**
   * Changes the merchant's tax settings (omitted fields kept, null clears; a new GSTIN brings its state code unless one
   * is given) and answers the merchant. Invoices read the settings afresh when issued; this process's cached key
   * lookups drop the merchant at once, other processes' within their cache time (seconds).
   */
  async updateTaxSettings(merchantId: string, input: TaxSettingsData): Promise<Merchant> {
    const merchant = await this.root.fork().transactional(async (em) => {
      const m = await em.findOneOrFail(Merchant, { id: merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const gstin = input.gstin !== undefined ? input.gstin : (m.gstin ?? null);
      const next = {
        gstin,
        stateCode:
          input.stateCode !== undefined
            ? input.stateCode
            : input.gstin != null
              ? input.gstin.slice(0, 2)
              : (m.stateCode ?? null),
        taxRateBps: input.taxRateBps !== undefined ? (input.taxRateBps ?? DEFAULT_TAX_RATE_BPS) : m.taxRateBps,
        sacCode: input.sacCode !== undefined ? input.sacCode : (m.sacCode ?? null),
        address: input.address !== undefined ? cleanAddress(input.address) : (m.address ?? null),
        eInvoicing: input.eInvoicing !== undefined ? (input.eInvoicing ?? false) : m.eInvoicing,
      };
      validateTaxSettings(next);
      Object.assign(m, next);
      return m;
    });
    for (const [hash, hit] of this.cache) if (hit.merchant.id === merchantId) this.cache.delete(hash);
    return merchant;
  }

  /**
   * Changes the merchant's billing settings (both modes): `max_retries` of the dunning policy (docs/subscriptions.md).
   */
  async updateBillingSettings(
    merchantId: string,
    input: { maxRetries?: number | null; mandateAfaLimit?: number | null },
  ): Promise<Merchant> {
    validateMaxRetries(input.maxRetries);
    const limit = input.mandateAfaLimit;
    if (limit != null && (!Number.isInteger(limit) || limit < 100 || limit > MAX_AFA_LIMIT)) {
      throw invalid('mandate_afa_limit', `mandate_afa_limit must be an integer from 100 to ${MAX_AFA_LIMIT} (paise).`);
    }
    const merchant = await this.root.fork().transactional(async (em) => {
      const m = await em.findOneOrFail(Merchant, { id: merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (input.maxRetries !== undefined) m.maxRetries = input.maxRetries ?? 3;
      if (limit !== undefined) m.mandateAfaLimit = limit ?? DEFAULT_AFA_LIMIT;
      return m;
    });
    for (const [hash, hit] of this.cache) if (hit.merchant.id === merchantId) this.cache.delete(hash);
    return merchant;
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
  /** rollKey for the operator, who names the merchant: 404 when there is none. */
  async rollKeyOf(merchantId: string, mode: Mode, opts: { graceSeconds?: number } = {}) {
    const exists = isUuid(merchantId) && (await this.root.fork().count(Merchant, { id: merchantId })) > 0;
    if (!exists) throw notFound('merchant', merchantId, 'id');
    return this.rollKey(merchantId, mode, opts);
  }

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
      await announce(em, {
        topic: 'api_key',
        merchantId,
        mode,
        id: fresh.id,
        keyIds,
        expiresAt: expiresAt.toISOString(),
      });
      return fresh;
    });
    return { secretKey: key, apiKey: row, previousKeyExpiresAt: expiresAt };
  }
}
