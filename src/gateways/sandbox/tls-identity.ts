import crypto from 'node:crypto';
import type { Pool } from 'pg';
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

// --- A minimal DER writer: just what an X.509 v3 certificate needs. ---

function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => der(0x31, Buffer.concat(parts));
const octets = (b: Buffer) => der(0x04, b);
const bits = (b: Buffer) => der(0x03, Buffer.concat([Buffer.from([0]), b]));
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));
const explicit = (n: number, inner: Buffer) => der(0xa0 + n, inner);

/** A positive INTEGER from big-endian bytes (a leading 0 when the top bit is set). */
function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return der(0x02, v[0] & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const chunk: number[] = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return der(0x06, Buffer.from(out));
}

/** UTCTime (years before 2050) or GeneralizedTime, as RFC 5280 asks. */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDhhmmss
  return d.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${iso.slice(2)}Z`)) : der(0x18, Buffer.from(`${iso}Z`));
}

const name = (commonName: string, organisation: string) =>
  seq(set(seq(oid('2.5.4.10'), utf8(organisation))), set(seq(oid('2.5.4.3'), utf8(commonName))));

const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), octets(value));

const ECDSA_WITH_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

/** A fresh self-signed certificate (10 years) and key for `host`. */
export function createTlsIdentity(host: string, now = new Date()): TlsIdentity {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const subject = name(host, 'Cadence gateway sandbox');
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(Buffer.concat([Buffer.from([0x01]), crypto.randomBytes(15)])),
    ECDSA_WITH_SHA256,
    subject,
    seq(time(new Date(now.getTime() - 86_400_000)), time(new Date(now.getTime() + 3650 * 86_400_000))),
    subject,
    spki,
    explicit(
      3,
      seq(
        extension('2.5.29.19', true, seq()), // basicConstraints: not a CA
        extension('2.5.29.15', true, bits(Buffer.from([0x80]))), // keyUsage: digitalSignature
        extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        extension('2.5.29.17', false, seq(der(0x82, Buffer.from(host, 'ascii')))), // subjectAltName: dNSName
      ),
    ),
  );
  const signature = crypto.sign('sha256', tbs, privateKey); // DER-encoded ECDSA-Sig-Value
  const cert = seq(tbs, ECDSA_WITH_SHA256, bits(signature));
  const lines = cert
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return {
    host,
    cert: `-----BEGIN CERTIFICATE-----\n${lines}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

const INSERT = `
insert into sandbox_tls_identities (host, certificate, private_key) values ($1, $2, $3)
on conflict (host) do nothing`;
const SELECT = 'select certificate, private_key from sandbox_tls_identities where host = $1';

/** The database's identity for `host`: the one stored, or a new one stored now (the first writer wins a race). */
export async function loadTlsIdentity(pool: Pool, secrets: SecretBox, host: string): Promise<TlsIdentity> {
  const read = async () => (await pool.query<{ certificate: string; private_key: string }>(SELECT, [host])).rows[0];
  let row = await read();
  if (!row) {
    const made = createTlsIdentity(host);
    await pool.query(INSERT, [host, made.cert, secrets.seal(made.key)]);
    row = await read();
  }
  return { host, cert: row.certificate, key: secrets.open(row.private_key) };
}
