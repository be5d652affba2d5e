import selfsigned from 'selfsigned';
import type { Pool } from 'pg';
import { logger } from '../../core/logger';
import type { SecretBox } from './sealed';

/**
 * The certificate the sandbox shows when a client tunnels to a gateway's host through it (docs/sandbox.md, "Pointing
 * the official SDKs at the sandbox"): self-signed, for that one host name only, and not a CA (basicConstraints
 * CA:FALSE), so a process that trusts it (NODE_EXTRA_CA_CERTS) trusts nothing else because of it. Made once per
 * database with a P-256 key of its own and kept in `sandbox_tls_identities` (the key sealed like webhook secrets), so
 * every sandbox process on one database, and every restart, shows the same certificate.
 */

export interface TlsIdentity {
  host: string;
  /** PEM. */
  cert: string;
  /** PEM (PKCS#8). */
  key: string;
}

/** A fresh self-signed certificate (10 years, P-256, ECDSA with SHA-256) and key for `host`. */
export async function createTlsIdentity(host: string, now = new Date()): Promise<TlsIdentity> {
  const made = await selfsigned.generate([{ name: 'commonName', value: host }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 86_400_000),
    notAfterDate: new Date(now.getTime() + 3650 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: host }] },
    ],
  });
  return { host, cert: made.cert, key: made.private };
}

const INSERT = `
insert into sandbox_tls_identities (host, certificate, private_key) values ($1, $2, $3)
on conflict (host) do nothing`;
const REPLACE = `
update sandbox_tls_identities set certificate = $2, private_key = $3 where host = $1 and private_key = $4`;
const SELECT = 'select certificate, private_key from sandbox_tls_identities where host = $1';

/**
 * The database's identity for `host`: the one stored, or a new one stored now (the first writer wins a race). One
 * sealed with another ENCRYPTION_KEY (a process started with a different key on this database) cannot be opened: it
 * is replaced by a new one, and clients that trusted the old certificate download the new one (docs/sandbox.md).
 */
export async function loadTlsIdentity(pool: Pool, secrets: SecretBox, host: string): Promise<TlsIdentity> {
  const read = async () => (await pool.query<{ certificate: string; private_key: string }>(SELECT, [host])).rows[0];
  let row = await read();
  if (!row) {
    const made = await createTlsIdentity(host);
    await pool.query(INSERT, [host, made.cert, secrets.seal(made.key)]);
    row = await read();
  }
  const stored = opened(secrets, host, row);
  if (stored) return stored;
  logger.warn({ host }, 'sandbox certificate sealed with another ENCRYPTION_KEY: replaced by a new one');
  const made = await createTlsIdentity(host);
  await pool.query(REPLACE, [host, made.cert, secrets.seal(made.key), row.private_key]);
  // Another process may have replaced it first: its identity when sealed with our key too, else our own.
  return opened(secrets, host, await read()) ?? made;
}

function opened(
  secrets: SecretBox,
  host: string,
  row: { certificate: string; private_key: string },
): TlsIdentity | null {
  try {
    return { host, cert: row.certificate, key: secrets.open(row.private_key) };
  } catch {
    return null;
  }
}
