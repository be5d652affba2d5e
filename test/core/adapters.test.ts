import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express, { Request, Response } from 'express';
import { buildSchema, execute, GraphQLError, OperationDefinitionNode, parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import Razorpay from 'razorpay';
import { runWithCommit } from '../../src/core/adapters/commit-message';
import { appHandleSetup, appRouter, expressClasses } from '../../src/core/adapters/express-dispatch';
import { wrapFieldResolver } from '../../src/core/adapters/graphql-field-resolve';
import { compiledVariableCoercion } from '../../src/core/adapters/graphql-jit-variables';
import { knexConnections } from '../../src/core/adapters/knex-pool';
import { withRequestDeadline } from '../../src/core/adapters/node-agent-deadline';
import { razorpayPost, razorpayRequestDefaults } from '../../src/core/adapters/razorpay-http';
import {
  currentTransaction,
  outermostTransaction,
  OrmTransaction,
  transactionConnection,
  transactionEnded,
} from '../../src/core/adapters/knex-transaction';
import { FreshDatabase, freshDatabase } from '../harness/database';

/**
 * Each adapter of src/core/adapters is the one place that relies on something a library does not document. These
 * tests run each against the installed library and check the shape it relies on, so an upgrade that changes it fails
 * here instead of in production (docs/decisions.md, "Couplings to library internals").
 */

describe('the ORM adapters (MikroORM, knex, pg)', () => {
  let db: FreshDatabase;
  let orm: MikroORM;
  let other: Client;
  const knexWarnings: string[] = [];
  const Probe = new EntitySchema({ name: 'Probe', properties: { id: { type: 'number', primary: true } } });

  beforeAll(async () => {
    db = await freshDatabase('cadence_adapters');
    // One connection: what the pool hands out next is predictable.
    orm = await MikroORM.init({
      clientUrl: db.url,
      entities: [Probe],
      pool: { min: 0, max: 1 },
      driverOptions: { log: { warn: (m: unknown) => void knexWarnings.push(String(m)) } },
    });
    other = new Client({ connectionString: db.url });
    await other.connect();
    await other.query('create table probe (id int primary key)');
  });
  afterAll(async () => {
    await other?.end();
    await orm?.close(true);
    await db?.drop();
  });

  const count = async () => (await other.query<{ n: number }>('select count(*)::int as n from probe')).rows[0].n;

  it("knex-pool: the pool's raw pg connections, one released handed out again, one discarded destroyed", async () => {
    const k = knexConnections(orm);
    const before = k.use();
    const a = await k.acquire();
    expect(a).toBeInstanceOf(Client);
    // The pool's counts (GET /metrics): the connection checked out is counted as used, not free.
    const during = k.use();
    expect(during.used).toBe(before.used + 1);
    expect(during).toEqual({
      used: expect.any(Number),
      free: expect.any(Number),
      pending: 0,
      creating: expect.any(Number),
    });
    // A named (prepared) statement on it, with pg's own parsers given per statement.
    expect((await a.query({ name: 'adapters_probe', text: 'select $1::int as n', values: [7] })).rows).toEqual([
      { n: 7 },
    ]);
    // orm-pool.ts gives a checked-out connection pg-pool's `release`: pg's Client must not have one of its own.
    expect('release' in Client.prototype).toBe(false);
    await k.release(a);
    const again = await k.acquire();
    expect(again === a).toBe(true);
    await k.discard(again, new Error('adapters probe: broken'));
    // knex's pool validates on acquire: the marked connection is destroyed, a new one opened.
    const fresh = await k.acquire();
    expect(fresh === a).toBe(false);
    expect((await fresh.query('select 1 as n')).rows).toEqual([{ n: 1 }]);
    await k.release(fresh);
    expect(knexWarnings.join('\n')).toMatch(/adapters probe: broken/);
  });

  it("knex-transaction: the transaction's own connection, its savepoints' root, whether it ended", async () => {
    let seen: OrmTransaction | undefined;
    await orm.em.fork().transactional(async (em) => {
      const trx = currentTransaction(em)!;
      expect(trx).toBeDefined();
      expect(outermostTransaction(em)).toBe(trx);
      expect(transactionEnded(trx)).toBe(false);
      const conn = await transactionConnection(trx);
      expect(conn).toBeInstanceOf(Client);
      // The same session and transaction as the ORM's statements.
      const [orm1] = await em
        .getConnection()
        .execute<{ txid: string }[]>('select txid_current()::text as txid', [], 'all', trx);
      expect((await conn.query<{ txid: string }>('select txid_current()::text as txid')).rows[0].txid).toBe(orm1.txid);
      await em.transactional(async (inner) => {
        const savepoint = currentTransaction(inner);
        expect(savepoint).toBeDefined();
        expect(savepoint).not.toBe(trx);
        expect(outermostTransaction(inner)).toBe(trx);
      });
      seen = trx;
    });
    expect(seen && transactionEnded(seen)).toBe(true);
  });

  it('commit-message: statements, COMMIT and BEGIN in one message; the ORM commits what follows', async () => {
    let results: Record<string, unknown>[][] = [];
    let seenByOther = -1;
    let open = false;
    await orm.em.fork().transactional(async (em) => {
      const trx = currentTransaction(em)!;
      await em.getConnection().execute('insert into probe values (1)', [], 'all', trx);
      results = await runWithCommit(em, trx, [
        { sql: 'insert into probe values (?) returning id', params: [2] },
        { sql: 'select count(*)::int as n from probe where id > ?', params: [0] },
      ]);
      seenByOther = await count(); // committed already, before the ORM's own COMMIT
      open = !transactionEnded(trx); // knex still holds a transaction: its COMMIT ends the one BEGIN opened
      await em.getConnection().execute('insert into probe values (3)', [], 'all', trx);
    });
    expect(results).toEqual([[{ id: 2 }], [{ n: 2 }]]);
    expect(seenByOther).toBe(2);
    expect(open).toBe(true);
    expect(await count()).toBe(3);

    // A statement that fails: nothing after it runs, the transaction fails and rolls back.
    await expect(
      orm.em.fork().transactional(async (em) => {
        const trx = currentTransaction(em)!;
        await em.getConnection().execute('insert into probe values (4)', [], 'all', trx);
        await runWithCommit(em, trx, [
          { sql: 'insert into probe values (?)', params: [1] },
          { sql: 'insert into probe values (?)', params: [5] },
        ]);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await count()).toBe(3);
    // The pool's one connection is still usable.
    expect(await orm.em.fork().getConnection().execute('select 1 as n')).toEqual([{ n: 1 }]);
  });
});

describe('express-dispatch (express 5)', () => {
  /** A request of the server's classes, as Node builds it, and its response. */
  function exchange(app: express.Express): { req: Request; res: Response } {
    const { IncomingMessage, ServerResponse } = expressClasses(app);
    const req = new IncomingMessage(new net.Socket());
    req.method = 'GET';
    req.url = '/probe?x=1';
    return { req: req as Request, res: new ServerResponse(req) as Response };
  }

  /** Runs `dispatch` up to the app's one middleware: the request and response as the middleware gets them. */
  function reach(app: express.Express, seen: { req?: Request; res?: Response }[], dispatch: () => void): Promise<void> {
    const before = seen.length;
    dispatch();
    return new Promise((resolve, reject) => {
      const wait = () => (seen.length > before ? resolve() : setImmediate(wait));
      setTimeout(() => reject(new Error('the middleware never ran')), 2000).unref();
      wait();
    });
  }

  it("sets a request up as app.handle does, minus the prototype change, and runs the app's router", async () => {
    for (const poweredBy of [true, false]) {
      const app = express();
      if (!poweredBy) app.disable('x-powered-by');
      const seen: { req?: Request; res?: Response }[] = [];
      app.use((req, res) => void seen.push({ req, res }));
      const theirs = exchange(app);
      await reach(app, seen, () =>
        (app as unknown as { handle(q: Request, s: Response, d: () => void): void }).handle(
          theirs.req,
          theirs.res,
          () => undefined,
        ),
      );
      const ours = exchange(app);
      const setUp = appHandleSetup(app);
      await reach(app, seen, () => {
        setUp(ours.req, ours.res);
        appRouter(app)(ours.req, ours.res, () => undefined);
      });
      expect(seen[1].req).toBe(ours.req);
      // What app.handle adds to the request and response (own properties, headers), ours adds too.
      expect(Object.keys(ours.req).sort()).toEqual(Object.keys(theirs.req).sort());
      expect(Object.keys(ours.res).sort()).toEqual(Object.keys(theirs.res).sort());
      expect(ours.res.getHeaderNames()).toEqual(theirs.res.getHeaderNames());
      expect(ours.req.res).toBe(ours.res);
      expect(ours.res.req).toBe(ours.req);
      expect(Object.getPrototypeOf(ours.res.locals)).toBeNull();
      // app.handle gives the app's prototypes; the server's classes are born with them.
      expect(Object.getPrototypeOf(theirs.req)).toBe(app.request);
      expect(Object.prototype.isPrototypeOf.call(app.request, ours.req)).toBe(true);
      expect(Object.prototype.isPrototypeOf.call(app.response, ours.res)).toBe(true);
      expect(Object.prototype.isPrototypeOf.call(http.IncomingMessage.prototype, app.request)).toBe(true);
      expect(Object.prototype.isPrototypeOf.call(http.ServerResponse.prototype, app.response)).toBe(true);
    }
  });

  it('serves real requests through the classes and the router', async () => {
    const app = express();
    app.disable('x-powered-by');
    app.get('/hello', (req, res) => void res.json({ path: req.path, host: req.get('host') }));
    const setUp = appHandleSetup(app);
    const router = appRouter(app);
    const server = http.createServer(expressClasses(app), (req, res) => {
      setUp(req as Request, res as Response);
      router(req as Request, res as Response, () => res.writeHead(404).end()); // no route: the router calls done
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/hello`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ path: '/hello', host: `127.0.0.1:${port}` });
      expect((await fetch(`http://127.0.0.1:${port}/nowhere`)).status).toBe(404);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('graphql-field-resolve', () => {
  it('a wrapped resolver runs under graphql-js and graphql-jit, and can refuse', async () => {
    const schema = buildSchema('type Query { hello(name: String): String, plain: String, guarded: String }');
    const fields = schema.getQueryType()!.getFields();
    expect(schema.getQueryType()!.getFields()).toBe(fields); // the same field objects every time
    const calls: string[] = [];
    for (const field of Object.values(fields)) {
      wrapFieldResolver(field, (resolve) => (source, args, ctx, info) => {
        calls.push(info.fieldName);
        if (info.fieldName === 'guarded') throw new Error('refused');
        return `wrapped:${String(resolve(source, args, ctx, info))}`;
      });
    }
    const root = { hello: (args: { name: string }) => `hi ${args.name}`, plain: 'p', guarded: 'secret' };
    const document = parse('{ hello(name: "x") plain guarded }');
    const expected = { hello: 'wrapped:hi x', plain: 'wrapped:p', guarded: null };
    const interpreted = await execute({ schema, document, rootValue: root });
    expect(interpreted.data).toEqual(expected);
    expect(interpreted.errors?.map((e) => e.message)).toEqual(['refused']);
    const compiled = compileQuery(schema, document);
    if (!isCompiledQuery(compiled)) throw new Error('graphql-jit did not compile the probe');
    const jit = await compiled.query(root, {}, {});
    expect(jit.data).toEqual(expected);
    expect(jit.errors?.map((e) => e.message)).toEqual(['refused']);
    expect(calls).toEqual(['hello', 'plain', 'guarded', 'hello', 'plain', 'guarded']);
  });
});

describe('graphql-jit-variables', () => {
  it('coerces what it accepts, answers errors for what it refuses, leaves absent variables absent', () => {
    const schema = buildSchema('input In { a: Int! } type Query { f(x: In, n: Int!, s: String): Int }');
    const op = parse('query Q($x: In, $n: Int!, $s: String) { f(x: $x, n: $n, s: $s) }')
      .definitions[0] as OperationDefinitionNode;
    const coerce = compiledVariableCoercion(schema, op.variableDefinitions!);
    expect(coerce({ x: { a: 1 }, n: 2, s: 'z' })).toEqual({ coerced: { x: { a: 1 }, n: 2, s: 'z' } });
    const partial = coerce({ n: 2 });
    expect(partial.errors).toBeUndefined();
    expect(Object.keys(partial.coerced!)).toEqual(['n']);
    for (const bad of [{ n: 'two' }, {}, { n: 1, x: { a: 'one' } }]) {
      const refused = coerce(bad);
      expect(refused.coerced).toBeUndefined();
      expect(refused.errors!.length).toBeGreaterThan(0);
      expect(refused.errors![0]).toBeInstanceOf(GraphQLError);
    }
  });
});

/** A local HTTP server for the gateway adapters; `answer` answers each request once its body is in. */
async function localServer(answer: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void) {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => answer(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('node-agent-deadline', () => {
  it('destroys a request left unanswered at its deadline, and leaves an answered one alone', async () => {
    const server = await localServer((req, _body, res) => void (req.url === '/slow' ? undefined : res.end('ok')));
    const agent = withRequestDeadline(new http.Agent({ keepAlive: true }), 300, () => new Error('probe deadline'));
    const get = (path: string) =>
      new Promise<string>((resolve, reject) => {
        http
          .get(`${server.url}${path}`, { agent }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve(body));
          })
          .on('error', reject);
      });
    try {
      expect(await get('/ok')).toBe('ok');
      const started = Date.now();
      await expect(get('/slow')).rejects.toThrow('probe deadline');
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(Date.now() - started).toBeLessThan(5000);
      await new Promise((resolve) => setTimeout(resolve, 400)); // past the first request's deadline
      expect(await get('/ok')).toBe('ok');
    } finally {
      agent.destroy();
      await server.close();
    }
  });
});

describe('razorpay-http', () => {
  it("the SDK's request defaults steer its calls; its post reaches extension routes with its auth and error shape", async () => {
    const seen: { method?: string; url?: string; auth?: string; probe?: string; body: string }[] = [];
    const server = await localServer((req, body, res) => {
      seen.push({
        method: req.method,
        url: req.url,
        auth: req.headers.authorization,
        probe: req.headers['x-probe'] as string,
        body,
      });
      res.setHeader('content-type', 'application/json');
      if (req.url?.endsWith('/refuse'))
        res.writeHead(400).end(JSON.stringify({ error: { code: 'BAD_REQUEST_ERROR', description: 'no' } }));
      else res.end(JSON.stringify(req.method === 'GET' ? { id: 'cust_1', entity: 'customer' } : { ok: true }));
    });
    try {
      const rzp = new Razorpay({ key_id: 'rzp_test_probe', key_secret: 'secret' });
      const defaults = razorpayRequestDefaults(rzp);
      expect(typeof defaults.baseURL).toBe('string');
      expect(typeof defaults.headers.common).toBe('object');
      defaults.baseURL = `${server.url}/razorpay`;
      defaults.proxy = false;
      defaults.headers.common['X-Probe'] = 'yes';
      expect(await rzp.customers.fetch('cust_1')).toMatchObject({ id: 'cust_1' });
      expect(await razorpayPost(rzp, '/test_helpers/probe', { a: 1 })).toEqual({ ok: true });
      await expect(razorpayPost(rzp, '/test_helpers/refuse', {})).rejects.toMatchObject({
        statusCode: 400,
        error: { code: 'BAD_REQUEST_ERROR' },
      });
      const basic = `Basic ${Buffer.from('rzp_test_probe:secret').toString('base64')}`;
      expect(seen.map(({ method, url, auth, probe }) => ({ method, url, auth, probe }))).toEqual([
        { method: 'GET', url: '/razorpay/v1/customers/cust_1', auth: basic, probe: 'yes' },
        { method: 'POST', url: '/razorpay/v1/test_helpers/probe', auth: basic, probe: 'yes' },
        { method: 'POST', url: '/razorpay/v1/test_helpers/refuse', auth: basic, probe: 'yes' },
      ]);
      expect(JSON.parse(seen[1].body)).toEqual({ a: 1 });
    } finally {
      await server.close();
    }
  });
});
