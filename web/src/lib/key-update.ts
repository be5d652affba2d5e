import { loadKeys, modeOfKey, saveKeys } from './session';

/**
 * After a key roll: the new secret key takes the place of the stored one for its mode, so the dashboard keeps
 * working once the old key's grace ends. The page is then reloaded to build its API client on the new key.
 */
export function storeRolledKey(secretKey: string): void {
  const mode = modeOfKey(secretKey);
  if (!mode) throw new Error('A secret key starts with sk_test_ or sk_live_.');
  saveKeys({ ...loadKeys(), mode, [mode]: secretKey });
}

export function reloadWithStoredKey(): void {
  window.location.reload();
}
