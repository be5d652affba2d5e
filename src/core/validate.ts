import { DomainError, invalid } from './errors';

/** Contract section 1: at most 50 keys, keys up to 40 characters, string values up to 500 characters. */
export function validateMetadata(metadata: unknown, param = 'metadata'): Record<string, string> {
  if (metadata == null) return {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw invalid(param, 'metadata must be an object.');
  // Keys, not entries: this runs for every event of a usage batch, and entries makes an array per key.
  const keys = Object.keys(metadata);
  if (keys.length > 50) throw invalid(param, 'metadata can have at most 50 keys.');
  for (const k of keys) {
    const v = (metadata as Record<string, unknown>)[k];
    if (k.length === 0 || k.length > 40) throw invalid(`${param}.${k}`, 'metadata keys must be 1 to 40 characters.');
    if (typeof v !== 'string') throw invalid(`${param}.${k}`, 'metadata values must be strings.');
    if (v.length > 500) throw invalid(`${param}.${k}`, 'metadata values can be at most 500 characters.');
  }
  return metadata as Record<string, string>;
}

/** An absolute http(s) URL (placeholders such as {PAYMENT_ID} allowed). */
export function validateUrl(value: string, param: string): string {
  try {
    const u = new URL(value.replace(/\{[A-Z_]+\}/g, 'x'));
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw invalid(param, `${param} must be an absolute http or https URL.`);
  }
  if (value.length > 2048) throw invalid(param, `${param} is longer than 2048 characters.`);
  return value;
}

export function requireInteger(value: number, param: string, min: number): void {
  if (!Number.isSafeInteger(value)) throw invalid(param, `${param} must be an integer.`);
  if (value < min) throw new DomainError('parameter_invalid', `${param} must be at least ${min}.`, param);
}
