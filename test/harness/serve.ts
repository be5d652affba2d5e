/**
 * The service in its own Node process (see process.ts): `node -r test/harness/swc-register.js test/harness/serve.ts`
 * with DATABASE_URL set. Prints `LISTENING <url>` once the server accepts requests.
 */
import 'reflect-metadata';
import { startApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/core/db';
import { servicePoolSize } from '../../src/core/sql';
import { entities } from '../../src/entities';

async function main() {
  const config = { ...loadConfig(), port: 0, host: '127.0.0.1' };
  // Sized as src/main.ts does (DB_POOL_MAX): the load test runs merchants' traffic through this process.
  const orm = await openDatabase(config.databaseUrl!, entities, servicePoolSize(config.dbPoolMax));
  const app = await startApp(config, orm, 0);
  // The demo setting for the IDE's tests: the test key `npm start` gives the IDE (src/main.ts), made by the test.
  if (process.env.IDE_DEMO_KEY) app.ide.demoKey = process.env.IDE_DEMO_KEY;
  process.stdout.write(`LISTENING ${app.url}\n`);
  process.on('SIGTERM', () => {
    void app
      .close()
      .then(() => orm.close(true))
      .finally(() => process.exit(0));
  });
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
