import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Reading rendered PDFs back as text, for the tests that check what a document prints. */

const run = promisify(execFile);

/** pdftotext comes from Debian's poppler-utils (.ci/run installs it); CI must have it, a developer may not. */
export const HAS_PDFTOTEXT = !spawnSync('pdftotext', ['-v']).error;
if (!HAS_PDFTOTEXT && !process.env.CI) {
  console.warn('pdftotext not found (apt-get install poppler-utils): the PDF text checks are skipped');
}

/** `it` where pdftotext exists, and always under CI (where its absence must fail); elsewhere `it.skip`. */
export const withText = HAS_PDFTOTEXT || process.env.CI ? it : it.skip;

/** The PDF's text as `pdftotext -layout` reads it. */
export async function pdfText(bytes: Buffer): Promise<string> {
  const file = path.join(os.tmpdir(), `cadence-pdf-${crypto.randomBytes(6).toString('hex')}.pdf`);
  fs.writeFileSync(file, bytes);
  try {
    const { stdout } = await run('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-']);
    return stdout;
  } finally {
    fs.rmSync(file, { force: true });
  }
}
