import crypto from 'node:crypto';

/** Lower-case hex digits of every byte, as character codes: [hi, lo] at 2 * byte. */
const HEX = new Uint8Array(512);
for (let b = 0; b < 256; b++) {
  const t = b.toString(16).padStart(2, '0');
  HEX[2 * b] = t.charCodeAt(0);
  HEX[2 * b + 1] = t.charCodeAt(1);
}
const DASH = 0x2d;

/**
 * `count` UUID v7 ids (RFC 9562) of the instant `msecs`: 48-bit Unix milliseconds, version 7, variant 10, and 74
 * random bits, the layout of the uuid package's `v7({ random, msecs })` (test/core/uuid-v7.test.ts compares them).
 * A usage batch needs 1,000 at once: the package makes each from some twenty string concatenations and a
 * lower-casing (a tenth of the batch's garbage); here one draw of random bytes, the ids' text written into one
 * buffer, and one string cut from it per id.
 */
export function uuidV7s(count: number, msecs = Date.now()): string[] {
  const random = crypto.randomBytes(10 * count);
  const text = Buffer.allocUnsafe(36 * count);
  const bytes = new Uint8Array(16);
  const ids = new Array<string>(count);
  // The 48-bit timestamp, the same for every id.
  bytes[0] = (msecs / 0x10000000000) & 0xff;
  bytes[1] = (msecs / 0x100000000) & 0xff;
  bytes[2] = (msecs / 0x1000000) & 0xff;
  bytes[3] = (msecs / 0x10000) & 0xff;
  bytes[4] = (msecs / 0x100) & 0xff;
  bytes[5] = msecs & 0xff;
  for (let i = 0; i < count; i++) {
    const r = 10 * i;
    bytes[6] = 0x70 | (random[r] & 0x0f);
    bytes[7] = random[r + 1];
    bytes[8] = 0x80 | (random[r + 2] & 0x3f);
    for (let k = 3; k < 10; k++) bytes[6 + k] = random[r + k];
    let at = 36 * i;
    for (let k = 0; k < 16; k++) {
      if (k === 4 || k === 6 || k === 8 || k === 10) text[at++] = DASH;
      text[at++] = HEX[2 * bytes[k]];
      text[at++] = HEX[2 * bytes[k] + 1];
    }
    ids[i] = text.toString('latin1', 36 * i, 36 * i + 36);
  }
  return ids;
}
