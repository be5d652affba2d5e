import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Reading rendered PDFs back as text, for the tests that check what a document prints. */

const run = promisify(execFile);

/** pdftotext comes from Debian's poppler-utils (.ci/run installs it): the tests need it, like PostgreSQL. */
export const HAS_PDFTOTEXT = !spawnSync('pdftotext', ['-v']).error;

/** The PDF's text as `pdftotext -layout` reads it; fails, saying how to install it, without pdftotext. */
export async function pdfText(bytes: Buffer): Promise<string> {
  if (!HAS_PDFTOTEXT) {
    throw new Error('the PDF text checks need pdftotext: install poppler-utils (apt-get install -y poppler-utils)');
  }
  const file = path.join(os.tmpdir(), `cadence-pdf-${crypto.randomBytes(6).toString('hex')}.pdf`);
  fs.writeFileSync(file, bytes);
  try {
    const { stdout } = await run('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-']);
    return stdout;
  } finally {
    fs.rmSync(file, { force: true });
  }
}
