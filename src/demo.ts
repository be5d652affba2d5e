import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createContext } from './core/context';
import { Mode } from './core/entity';
import { logger } from './core/logger';
import type { Services } from './services';
import { Provider } from './modules/providers';
import { Merchant, MerchantService } from './modules/merchants';

export interface DemoMerchant {
  merchantId: string;
  keys: { test: string; live: string };
  created: boolean;
}

/**
 * The embedded (development) database gets a demo merchant on first start. Its keys are kept in
 * `<DATA_DIR>/demo-merchant.json` (mode 0600) beside the database, so every start can print them again;
 * the database itself holds only their hashes, as for every merchant.
 */
export async function ensureDemoMerchant(orm: MikroORM, dataDir: string): Promise<DemoMerchant> {
  const file = path.join(dataDir, 'demo-merchant.json');
  if (fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Omit<DemoMerchant, 'created'>;
    if (await orm.em.fork().findOne(Merchant, { id: saved.merchantId })) return { ...saved, created: false };
  }
  const { merchant, apiKeys } = await new MerchantService(orm.em).create({
    name: 'Demo Merchant',
    gstin: '29ABCDE1234F1ZW',
    reportingCurrency: 'INR',
  });
  const demo = { merchantId: merchant.id, keys: apiKeys };
  fs.writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
  return { ...demo, created: true };
}

/**
 * Connects the demo merchant to both gateways in the sandbox, in both modes, once. The credentials are sandbox
 * ones (docs/sandbox.md): they work only against the local gateway sandbox.
 */
export async function connectDemoGateways(orm: MikroORM, services: Services, merchantId: string): Promise<void> {
  for (const mode of [Mode.TEST, Mode.LIVE]) {
    const ctx = createContext({
      em: orm.em as never,
      principal: { kind: 'merchant', merchantId, mode, apiKeyId: 'demo' },
      requestId: 'demo-setup',
      log: logger,
      services,
    });
    const existing = (await services.providers.list(ctx, { first: 100 })).edges.map((e) => e.node);
    const secret = () => crypto.randomBytes(12).toString('hex');
    if (!existing.some((c) => c.provider === Provider.STRIPE)) {
      await services.providers.connect(ctx, {
        provider: Provider.STRIPE,
        credentials: { secretKey: `sk_${mode}_demo${secret()}`, webhookSecret: `whsec_${secret()}` },
        isDefault: true,
      });
    }
    if (!existing.some((c) => c.provider === Provider.RAZORPAY)) {
      await services.providers.connect(ctx, {
        provider: Provider.RAZORPAY,
        credentials: { keyId: `rzp_${mode}_demo${secret()}`, keySecret: secret(), webhookSecret: secret() },
        isDefault: false,
      });
    }
  }
}
