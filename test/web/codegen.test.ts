import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The front ends' typed documents (web/src/gql) are generated from schema/schema.graphql by GraphQL Code Generator
 * (web/codegen.ts). The checked-in output must be what the generator makes of today's schema and documents: a
 * document that asks for a field the schema does not have, or output older than a document, fails here (and in
 * `npm run build`, which runs the same check).
 */

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'node_modules/.bin/graphql-codegen');

async function codegenCheck(cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    // Outside NODE_ENV=test (jest's), the generator prints which document and field failed.
    const env = { ...process.env, NODE_ENV: 'development' };
    const r = await run(CLI, ['--config', 'web/codegen.ts', '--check'], { cwd, env });
    return { ok: true, output: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** A copy of what the generator reads (schema, config, the front ends' sources), to break on purpose. */
function copyInputs(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codegen-'));
  fs.cpSync(path.join(ROOT, 'schema'), path.join(dir, 'schema'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'web'), path.join(dir, 'web'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

jest.setTimeout(60_000);

describe('typed GraphQL documents of the dashboard and the portal', () => {
  it('are up to date with schema/schema.graphql', async () => {
    const r = await codegenCheck(ROOT);
    expect(r.output).not.toMatch(/stale|failed/i);
    expect(r.ok).toBe(true);
  });

  it('fail when a document asks for a field the schema does not have (self-test)', async () => {
    const dir = copyInputs();
    try {
      const page = path.join(dir, 'web/src/dashboard/pages/overview.tsx');
      fs.writeFileSync(page, fs.readFileSync(page, 'utf8').replace('arpu', 'arpuThatDoesNotExist'));
      const r = await codegenCheck(dir);
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/arpuThatDoesNotExist/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fail when the checked-in output is stale (self-test)', async () => {
    const dir = copyInputs();
    try {
      fs.appendFileSync(path.join(dir, 'web/src/gql/gql.ts'), '\n// edited by hand\n');
      const r = await codegenCheck(dir);
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/stale/i);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
