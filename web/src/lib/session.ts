/**
 * The merchant's keys, kept for this browser session only (sessionStorage: closing the tab forgets them), one per
 * mode; the mode switch picks which one the dashboard uses. A key's prefix says its mode.
 */
export type Mode = 'test' | 'live';
export interface KeyRing {
  mode: Mode;
  test?: string;
  live?: string;
}

const STORE = 'cadence.dashboard.keys';

export const modeOfKey = (key: string): Mode | null =>
  key.startsWith('sk_test_') ? 'test' : key.startsWith('sk_live_') ? 'live' : null;

export function loadKeys(): KeyRing {
  try {
    const raw = sessionStorage.getItem(STORE);
    if (raw) return JSON.parse(raw) as KeyRing;
  } catch {
    // unreadable: start over
  }
  return { mode: 'test' };
}

export function saveKeys(ring: KeyRing): void {
  sessionStorage.setItem(STORE, JSON.stringify(ring));
}

export function clearKeys(): void {
  sessionStorage.removeItem(STORE);
}
