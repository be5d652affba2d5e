/**
 * The OpenAPI document as outside clients use it: Redocly's linter finds nothing to report, and a TypeScript client
 * generated from it by openapi-typescript names the resources, inputs and list envelopes and type-checks.
 * (test/cli/emit-schema.test.ts keeps schema/openapi.json equal to what the code generates.)
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { routes } from '../../rest-shim/routes';
import { BODY_EXAMPLES, PARAM_EXAMPLES } from '../../rest-shim/examples';
import { openApiValidator, validatorFor } from '../harness/openapi-check';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const DOCUMENT = path.join(ROOT, 'schema/openapi.json');
const bin = (pkg: string, file: string) => path.join(ROOT, 'node_modules', pkg, file);

/** Runs a package's command line with this Node; answers stdout, or the failure with its output. */
async function cli(pkg: string, file: string, args: string[], cwd = ROOT): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [bin(pkg, file), ...args], {
      cwd,
      maxBuffer: 64 * 2 ** 20,
      // No telemetry, no update check: the test runs offline.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    });
    return stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${pkg} failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`, { cause: e });
  }
}

describe('schema/openapi.json', () => {
  it('lints clean with Redocly (recommended rules): no errors, no warnings', async () => {
    const out = await cli('@redocly/cli', 'bin/cli.js', [
      'lint',
      DOCUMENT,
      '--config',
      path.join(ROOT, 'redocly.yaml'),
      '--format=json',
    ]);
    const report = JSON.parse(out) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    expect(report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('documents every 4xx answer of an operation with the API error', () => {
    const doc = JSON.parse(fs.readFileSync(DOCUMENT, 'utf8'));
    const op = (p: string, m: string) => doc.paths[p][m].responses;
    expect(Object.keys(op('/payments', 'post')).sort()).toEqual([
      '201',
      '400',
      '401',
      '409',
      '413',
      '429',
      '502',
      'default',
    ]);
    expect(Object.keys(op('/payments/{id}', 'get')).sort()).toEqual(['200', '400', '401', '404', '429', 'default']);
    expect(Object.keys(op('/payments/{id}/refund', 'post')).sort()).toEqual([
      '201',
      '400',
      '401',
      '404',
      '409',
      '413',
      '429',
      '502',
      'default',
    ]);
    expect(Object.keys(op('/providers/connections/{id}', 'delete')).sort()).toEqual([
      '200',
      '400',
      '401',
      '404',
      '409',
      '429',
      'default',
    ]);
    for (const methods of Object.values<Record<string, { responses: Record<string, any> }>>(doc.paths)) {
      for (const { responses } of Object.values(methods)) {
        for (const [status, answer] of Object.entries(responses)) {
          if (/^[45]/.test(status))
            expect(answer.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
        }
      }
    }
    expect(doc.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
  });

  it('answers and bodies are named components', () => {
    const doc = JSON.parse(fs.readFileSync(DOCUMENT, 'utf8'));
    const named = (schema: { $ref?: string }) => schema.$ref?.replace('#/components/schemas/', '');
    for (const [p, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [m, op] of Object.entries<any>(methods)) {
        const [status, success] = Object.entries<any>(op.responses)[0];
        if (!success.content['application/json']) {
          // A file answer (Route.binary): its bytes in its media type, no JSON component.
          expect({ op: `${m} ${p}`, file: Object.values<any>(success.content)[0].schema }).toEqual({
            op: `${m} ${p}`,
            file: { type: 'string', format: 'binary' },
          });
          continue;
        }
        const name = named(success.content['application/json'].schema);
        expect({ op: `${m} ${p}`, status, named: !!name && name in doc.components.schemas }).toEqual({
          op: `${m} ${p}`,
          status,
          named: true,
        });
        if (op.requestBody)
          expect(named(op.requestBody.content['application/json'].schema)).toEqual(expect.any(String));
      }
    }
    expect(named(doc.paths['/payments'].get.responses['200'].content['application/json'].schema)).toBe('PaymentList');
    expect(doc.components.schemas.PaymentList.properties.data.items).toEqual({ $ref: '#/components/schemas/Payment' });
    expect(doc.components.schemas.PaymentStatus.enum.every((v: string) => v === v.toLowerCase())).toBe(true);
  });

  it('gives every request body a valid example, and every path parameter one', () => {
    const doc = JSON.parse(fs.readFileSync(DOCUMENT, 'utf8'));
    const checker = openApiValidator(doc);
    const problems: string[] = [];
    for (const [p, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [m, op] of Object.entries<any>(methods)) {
        const where = `${m.toUpperCase()} ${p}`;
        for (const param of op.parameters ?? []) {
          if (param.in === 'path' && typeof param.example !== 'string')
            problems.push(`${where}: no example of {${param.name}}`);
        }
        const media = op.requestBody?.content['application/json'];
        if (!media) continue;
        if (media.example === undefined) {
          problems.push(`${where}: no request body example (rest-shim/examples.ts BODY_EXAMPLES)`);
          continue;
        }
        const validate = validatorFor(checker, media.schema);
        if (!validate(media.example))
          problems.push(`${where}: the example is no valid body: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
      }
    }
    expect(problems).toEqual([]);
    // Every example belongs to an operation of the route table (none is left behind by a renamed route).
    const ops = new Set(routes.map((r) => `${r.method.toUpperCase()} ${r.path}`));
    expect(Object.keys(BODY_EXAMPLES).filter((k) => !ops.has(k))).toEqual([]);
    expect(Object.keys(PARAM_EXAMPLES).filter((p) => !routes.some((r) => r.path === p))).toEqual([]);
  });

  it('generates a TypeScript client (openapi-typescript) whose resource, input and list types type-check', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-openapi-client-'));
    try {
      await cli('openapi-typescript', 'bin/cli.js', [DOCUMENT, '--output', path.join(dir, 'api.ts')]);
      const generated = fs.readFileSync(path.join(dir, 'api.ts'), 'utf8');
      for (const name of [
        'Payment',
        'PaymentList',
        'Refund',
        'Product',
        'ProductList',
        'Plan',
        'Price',
        'Customer',
        'CreatePaymentInput',
        'PaymentStatus',
        'Error',
      ]) {
        expect(generated).toMatch(new RegExp(`\\b${name}: \\{|\\b${name}: "`));
      }
      // A client as a merchant would write it; the @ts-expect-error lines fail the check if the types get looser.
      fs.writeFileSync(
        path.join(dir, 'client.ts'),
        `import type { components, paths } from './api';
type Schemas = components['schemas'];
type Payment = Schemas['Payment'];
type Product = Schemas['Product'];

export function collected(page: Schemas['PaymentList']): number {
  return page.data.filter((p: Payment) => p.status === 'succeeded').reduce((sum, p) => sum + p.amount, 0);
}
export function nextCursor(page: Schemas['ProductList']): string | null {
  return page.has_more ? page.next_cursor : null;
}
export function planNames(product: Product): string[] {
  return product.plans.map((plan) => plan.name);
}
export const body: paths['/payments']['post']['requestBody']['content']['application/json'] = {
  amount: 1000,
  currency: 'usd',
  customer_email: 'a@example.com',
  success_url: 'https://shop.example/ok',
  cancel_url: 'https://shop.example/cancel',
};
export const notFound: paths['/payments/{id}']['get']['responses'][404]['content']['application/json']['error']['code'] = 'resource_not_found';
export const refund = (r: Schemas['Refund']): string => r.payment_id;
type Events = paths['/subscriptions/{id}/events']['get']['responses'][200]['content']['application/json'];
export const lastState = (events: Events): string | undefined => events[events.length - 1]?.to_state;
// @ts-expect-error the events answer is a bare array, not a list envelope
export const eventsPage = (events: Events) => events.data;
// @ts-expect-error enum values are REST's lower case
export const upper: Payment['status'] = 'SUCCEEDED';
// @ts-expect-error amounts are integers, not strings
export const text: Schemas['CreatePaymentInput']['amount'] = '100';
`,
      );
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'ES2022',
            module: 'commonjs',
            skipLibCheck: true,
            types: [],
          },
          files: ['client.ts'],
        }),
      );
      await cli('typescript', 'bin/tsc', ['-p', path.join(dir, 'tsconfig.json')], dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
