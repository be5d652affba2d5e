import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { Mode } from '../core/entity';
import { DomainError } from '../core/errors';
import { EmbeddedDatabase, openDatabase, startEmbeddedPostgres } from '../core/db';
import { entities } from '../entities';
import { MerchantService } from '../modules/merchants';

const USAGE = `Usage:
  npm run merchant:create -- --name "Acme" [--gstin 29ABCDE1234F1ZW] [--state-code 29] [--reporting-currency INR] [--rate-limit 100]
      [--tax-rate-bps 1800] [--sac-code 998314] [--address "..."] [--max-retries 3]
  npm run merchant:roll-key -- --merchant <merchant id> --mode test|live [--grace-seconds 0]
Works against DATABASE_URL, or the embedded database in DATA_DIR (default ./.data) when it is unset.`;

/** Operator CLI: the same operations as POST /v1/admin/merchants and the rollApiKey mutation. */
async function main() {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      gstin: { type: 'string' },
      'state-code': { type: 'string' },
      'reporting-currency': { type: 'string' },
      'rate-limit': { type: 'string' },
      'tax-rate-bps': { type: 'string' },
      'sac-code': { type: 'string' },
      address: { type: 'string' },
      'max-retries': { type: 'string' },
      merchant: { type: 'string' },
      mode: { type: 'string' },
      'grace-seconds': { type: 'string' },
    },
  });
  if (command !== 'create' && command !== 'roll-key') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const config = loadConfig();
  let embedded: EmbeddedDatabase | undefined;
  const url = config.databaseUrl ?? (embedded = await startEmbeddedPostgres(config.dataDir)).url;
  const orm = await openDatabase(url, entities, 2);
  try {
    const merchants = new MerchantService(orm.em as never);
    if (command === 'create') {
      const { merchant, apiKeys } = await merchants.create({
        name: values.name ?? '',
        gstin: values.gstin ?? null,
        stateCode: values['state-code'] ?? null,
        reportingCurrency: values['reporting-currency'] ?? null,
        rateLimitPerSecond: values['rate-limit'] ? Number(values['rate-limit']) : null,
        taxRateBps: values['tax-rate-bps'] ? Number(values['tax-rate-bps']) : null,
        sacCode: values['sac-code'] ?? null,
        address: values.address ?? null,
        maxRetries: values['max-retries'] ? Number(values['max-retries']) : null,
      });
      process.stdout.write(
        JSON.stringify({ id: merchant.id, object: 'merchant', name: merchant.name, api_keys: apiKeys }, null, 2) + '\n',
      );
    } else {
      if (!values.merchant || (values.mode !== 'test' && values.mode !== 'live')) throw new Error(USAGE);
      const r = await merchants.rollKey(values.merchant, values.mode as Mode, {
        graceSeconds: Number(values['grace-seconds'] ?? 0),
      });
      process.stdout.write(
        JSON.stringify(
          { mode: values.mode, secret_key: r.secretKey, previous_key_expires_at: r.previousKeyExpiresAt.toISOString() },
          null,
          2,
        ) + '\n',
      );
    }
  } finally {
    await orm.close(true);
    if (embedded) await embedded.stop();
  }
}

main().catch((err) => {
  process.stderr.write(
    `${err instanceof DomainError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
