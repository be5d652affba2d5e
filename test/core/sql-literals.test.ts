import fs from 'node:fs';
import path from 'node:path';

/**
 * One way into the database (docs/architecture.md): SQL is written in a module's `*.store.ts` through src/core/sql.ts,
 * in migrations, or in the gateway sandbox (an outside gateway's stand-in, with tables of its own). A SQL literal
 * anywhere else in src/ fails here, naming file and line.
 */

const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'src');

/** Where SQL may be written. */
const allowed = (file: string) =>
  file.endsWith('.store.ts') ||
  file.startsWith('src/migrations/') ||
  file.startsWith('src/gateways/sandbox/') ||
  file === 'src/core/sql.ts';

/** Files with a reason of their own. */
const EXCEPTIONS: Record<string, string> = {
  'src/core/listener.ts': 'the one dedicated LISTEN connection: `listen <channel>` and its health check',
  'src/core/embedded-postgres.ts': 'creates the database on the admin connection, before any pool exists',
};

/** A string that is a SQL statement (or a piece of one), not prose that happens to say "select" or "update". */
const SQL =
  /\b(?:select\s+(?:[\s\S]{1,400}?\bfrom\s+"?[a-z_]|1\b|pg_\w+\s*\(|exists\b|count\s*\()|insert\s+into\s+\w+|update\s+\w+(?:\s+(?:as\s+)?\w+)?\s+set\s|delete\s+from\s+\w+)/i;

/** The string literals of TypeScript source (quotes, double quotes, templates), with their lines; comments skipped. */
export function stringLiterals(source: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let i = 0;
  let line = 1;
  const n = source.length;
  while (i < n) {
    const c = source[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (c === '/' && source[i + 1] === '/') {
      while (i < n && source[i] !== '\n') i++;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      line += (source.slice(i, stop).match(/\n/g) ?? []).length;
      i = stop;
    } else if (c === "'" || c === '"' || c === '`') {
      const start = line;
      let text = '';
      let depth = 0; // inside `${ ... }` of a template
      i++;
      while (i < n) {
        const d = source[i];
        if (d === '\\') {
          text += source.slice(i, i + 2);
          i += 2;
          continue;
        }
        if (d === '\n') line++;
        if (c === '`' && depth === 0 && d === '$' && source[i + 1] === '{') {
          depth = 1;
          text += '${';
          i += 2;
          continue;
        }
        if (depth > 0 && d === '{') depth++;
        else if (depth > 0 && d === '}') depth--;
        else if (depth === 0 && d === c) break;
        text += d;
        i++;
      }
      i++;
      out.push({ line: start, text });
    } else {
      i++;
    }
  }
  return out;
}

/** SQL literals of one file's source. */
export function sqlLiterals(source: string): { line: number; text: string }[] {
  return stringLiterals(source).filter((s) => SQL.test(s.text));
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every SQL literal in src/ outside the places allowed, as `file:line: text`. */
function misplaced(): string[] {
  return tsFiles(SRC).flatMap((abs) => {
    const file = path.relative(ROOT, abs).split(path.sep).join('/');
    if (allowed(file) || file in EXCEPTIONS) return [];
    return sqlLiterals(fs.readFileSync(abs, 'utf8')).map(
      (s) => `${file}:${s.line}: ${s.text.replace(/\s+/g, ' ').slice(0, 100)}`,
    );
  });
}

describe('SQL lives in stores', () => {
  it('finds no SQL literal in src/ outside stores, src/core/sql.ts, migrations and the sandbox', () => {
    expect(misplaced()).toEqual([]);
  });

  it('recognises statements in every kind of string, and not prose or code', () => {
    const planted = [
      "const q = 'select id, status from payments where id = $1';",
      'await db.query("insert into refunds (id) values ($1)");',
      'const t = `update payments set status = ${s} where id = ?`;',
      "x('delete from outbox_events where id < $1')",
      "run('select 1')",
      "run('select pg_notify(?, ?)', [a, b])",
      'run(`select count(*) as n from refunds r join payments p on p.id = r.payment_id`)',
      'q(`select customer_id, sum(amount - amount_refunded)::bigint as amount from payments where {tenant}`)',
      'const u = `insert into customers as x (id) values (?)`',
      "const v = 'update webhook_deliveries d set status = 1'",
    ];
    for (const src of planted) expect(sqlLiterals(src)).toHaveLength(1);
    const innocent = [
      "throw new Error('Select a plan before you update the subscription')",
      "const d = 'Payments updated since the last sweep, selected from the outbox'",
      'hash.update(tail).digest("hex")',
      '// select id from payments where id = $1\nconst a = 1;',
      "/* insert into payments (id) values (1) */ const b = 'ok';",
      'const key = `${merchantId}:${mode}:${hash.update(tail).digest("hex")}`;',
    ];
    for (const src of innocent) expect(sqlLiterals(src)).toEqual([]);
  });

  it('fails on a literal planted in a service, and allows it in a store', () => {
    const fixture =
      "export const find = (db: any, id: string) => db.query('select * from payments where id = $1', [id]);\n";
    expect(sqlLiterals(fixture)).toEqual([{ line: 1, text: 'select * from payments where id = $1' }]);
    expect(allowed('src/modules/payments/payment.service.ts')).toBe(false);
    expect(allowed('src/modules/payments/payment.store.ts')).toBe(true);
  });

  it('sees the statements where they are allowed (the scan is not blind)', () => {
    const inStores = tsFiles(SRC)
      .filter((abs) => abs.endsWith('.store.ts'))
      .reduce((n, abs) => n + sqlLiterals(fs.readFileSync(abs, 'utf8')).length, 0);
    expect(inStores).toBeGreaterThan(20);
  });
});
