import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * AES-256-GCM for secrets at rest (gateway credentials). The key is ENCRYPTION_KEY (32 bytes, base64 or hex);
 * for the embedded default it is generated once into `<DATA_DIR>/encryption.key`.
 * Stored form: `v1:<iv b64>:<tag b64>:<ciphertext b64>`.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromEnv(dataDir: string, env = process.env): SecretBox {
    const raw = env.ENCRYPTION_KEY;
    if (raw) return new SecretBox(SecretBox.parseKey(raw));
    const file = path.join(dataDir, 'encryption.key');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(dataDir, { recursive: true });
      // `wx`: when several processes start at once, only one writes the key; the others read it.
      try {
        fs.writeFileSync(file, crypto.randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    return new SecretBox(SecretBox.parseKey(fs.readFileSync(file, 'utf8').trim()));
  }

  static parseKey(raw: string): Buffer {
    const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes, base64 or hex encoded');
    return key;
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== 'v1') throw new Error('Unknown secret format');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }
}
