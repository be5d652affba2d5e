import fs from 'node:fs';
import path from 'node:path';
import { MODULE_DEPENDENCIES } from '../../src/modules/boundaries';
import { Import, importsOf, rel, root, sourceFiles } from './imports';

/**
 * The modules under src/modules are boundaries (src/modules/boundaries.ts): each has one public surface, its
 * index.ts; a module imports only the modules it declares, and those declarations form no cycle; the money kernel
 * (src/money) imports nothing of the domain; a store's SQL names only its own module's tables. Each rule is a
 * function of import lists (or of a store's text), so the self-tests below can feed it lists that must fail.
 */

type Graph = Readonly<Record<string, readonly string[]>>;
interface FileImports {
  file: string;
  imports: Import[];
}

const MODULES = 'src/modules/';

/** The module a path (a file, or an import target without extension) belongs to, if any. */
function moduleOf(p: string): string | null {
  if (!p.startsWith(MODULES)) return null;
  const [name, ...rest] = p.slice(MODULES.length).split('/');
  // Inside a module folder, or the folder itself; src/modules/boundaries.ts is the table, not a module.
  if (rest.length > 0) return name;
  return fs.existsSync(path.join(root, MODULES, `${name.replace(/\.ts$/, '')}.ts`)) ? null : name;
}

/** (a) An import of another module must name its folder (its index.ts), never a file inside it. */
export function bypassingIndex(files: FileImports[]): string[] {
  return files.flatMap(({ file, imports }) =>
    imports
      .filter(({ target }) => {
        const m = moduleOf(target);
        return m !== null && m !== moduleOf(file) && target !== `${MODULES}${m}` && target !== `${MODULES}${m}/index`;
      })
      .map(({ target }) => `${file} -> ${target}`),
  );
}

/** (b) A module imports only the modules its entry lists (every module needs an entry). */
export function undeclared(files: FileImports[], allowed: Graph): string[] {
  return files.flatMap(({ file, imports }) => {
    const from = moduleOf(file);
    if (from === null) return [];
    return imports
      .map(({ target }) => moduleOf(target))
      .filter((to): to is string => to !== null && to !== from && !(allowed[from] ?? []).includes(to))
      .map((to) => `${from} -> ${to} (${file})`);
  });
}

/** The strongly connected components of more than one node, or of one node with an edge to itself (Tarjan). */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph[v] ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph[v] ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of Object.keys(graph)) if (!index.has(v)) visit(v);
  return found;
}

/** (c) Cycles of the declared table, and of the modules' actual imports (type-only ones included). */
export function moduleCycles(files: FileImports[], declared: Graph): string[][] {
  const actual: Record<string, string[]> = {};
  for (const { file, imports } of files) {
    const from = moduleOf(file);
    if (from === null) continue;
    for (const { target } of imports) {
      const to = moduleOf(target);
      if (to !== null && to !== from) (actual[from] ??= []).push(to);
    }
  }
  return [...cycles(declared), ...cycles(actual)];
}

/** The file an import target names: `x.ts`, else `x/index.ts`. */
function resolve(target: string): string {
  return fs.existsSync(path.join(root, `${target}.ts`)) ? `${target}.ts` : `${target}/index.ts`;
}

/**
 * (c) Runtime cycles between files that span modules (type-only imports are erased, so they load nothing). A file
 * outside src/modules on such a cycle (the composition root, say) still joins the modules on it.
 */
export function runtimeCycles(files: FileImports[], resolveTarget: (t: string) => string = resolve): string[][] {
  const graph: Record<string, string[]> = {};
  for (const { file, imports } of files)
    graph[file] = imports.filter((i) => !i.typeOnly).map((i) => resolveTarget(i.target));
  return cycles(graph).filter((scc) => new Set(scc.map(moduleOf).filter((m) => m !== null)).size > 1);
}

/** (d) src/money imports only itself. */
export function moneyLeaks(files: FileImports[]): string[] {
  return files
    .filter(({ file }) => file.startsWith('src/money/'))
    .flatMap(({ file, imports }) =>
      imports
        .filter(({ target }) => target !== 'src/money' && !target.startsWith('src/money/'))
        .map(({ target }) => `${file} -> ${target}`),
    );
}

/** Tables whose migrations declare no entity: their owners. */
const TABLES_WITHOUT_ENTITY: Record<string, string> = {
  invoice_documents: 'invoices',
  mandate_attempts: 'analytics',
  mrr_movements: 'analytics',
  mrr_movement_days: 'analytics',
  usage_aggregates: 'usage',
  usage_events: 'usage',
  usage_event_keys: 'usage',
  usage_units: 'usage',
};

/** Tables of src/core: the outbox (src/core/events.ts) and the shared limits (src/core/limits). */
const CORE_TABLES = ['outbox_events', 'rate_limits', 'websocket_leases'];

/** Every table a module owns: its entities' `@Entity({ tableName })`, and the tables above. */
function tableOwners(): Record<string, string> {
  const owners: Record<string, string> = { ...TABLES_WITHOUT_ENTITY };
  for (const f of sourceFiles(path.join(root, 'src/modules'))) {
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/@Entity\(\{[^}]*tableName:\s*'(\w+)'/g))
      owners[m[1]] = moduleOf(rel(f))!;
  }
  return owners;
}

const stripComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/**
 * (e) Tables of other modules a store's SQL names (from, join, into, update). Another module's rows come into a
 * statement through that module's SQL pieces (a function of its store, exported by its index.ts), composed in.
 */
export function foreignTables(store: string, text: string, owners: Record<string, string>): string[] {
  const own = moduleOf(store);
  const names = [...stripComments(text).matchAll(/\b(?:from|join|into|update)\s+"?(\w+)"?/gi)].map((m) => m[1]);
  return [...new Set(names)].filter((t) => owners[t] && owners[t] !== own).map((t) => `${store}: ${t} (${owners[t]})`);
}

const sources = [
  ...sourceFiles(path.join(root, 'src')),
  ...sourceFiles(path.join(root, 'rest-shim')),
  ...sourceFiles(path.join(root, 'bench')),
  path.join(root, 'mikro-orm.config.ts'),
];
const all: FileImports[] = sources.map((f) => ({ file: rel(f), imports: importsOf(f) }));
const moduleNames = fs
  .readdirSync(path.join(root, 'src/modules'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

describe('module boundaries', () => {
  it('has modules and files to check', () => {
    expect(moduleNames.length).toBeGreaterThan(10);
    expect(all.filter((f) => moduleOf(f.file)).length).toBeGreaterThan(100);
  });

  it('every module has an index.ts and an entry in the table, and the table names only modules', () => {
    expect(moduleNames.filter((m) => !fs.existsSync(path.join(root, 'src/modules', m, 'index.ts')))).toEqual([]);
    expect(moduleNames.filter((m) => !(m in MODULE_DEPENDENCIES))).toEqual([]);
    const listed = Object.entries(MODULE_DEPENDENCIES).flatMap(([m, deps]) => [m, ...deps]);
    expect(listed.filter((m) => !moduleNames.includes(m))).toEqual([]);
  });

  it('(a) other modules and the rest of the service import a module only through its index.ts', () => {
    expect(bypassingIndex(all)).toEqual([]);
  });

  it('(b) a module imports only the modules it declares', () => {
    expect(undeclared(all, MODULE_DEPENDENCIES)).toEqual([]);
  });

  it('(c) no cycle between modules, declared or imported, and no runtime cycle of files across modules', () => {
    expect(moduleCycles(all, MODULE_DEPENDENCIES)).toEqual([]);
    expect(runtimeCycles(all)).toEqual([]);
  });

  it('(d) src/money imports nothing from src outside itself', () => {
    expect(all.filter((f) => f.file.startsWith('src/money/')).length).toBeGreaterThan(3);
    expect(moneyLeaks(all)).toEqual([]);
  });

  it("(e) a store names only its own module's tables in SQL", () => {
    const owners = tableOwners();
    // Every table the service's migrations create has an owner (core's own tables aside).
    const created = sourceFiles(path.join(root, 'src/migrations')).flatMap((f) =>
      // Names only: a partition made from a template (`"${m.name}"`) is part of its parent's table.
      [...fs.readFileSync(f, 'utf8').matchAll(/create (?:unlogged )?table (?:if not exists )?(?!if\b)"?(\w+)/gi)].map(
        (m) => m[1],
      ),
    );
    expect([...new Set(created)].filter((t) => !owners[t] && !CORE_TABLES.includes(t)).sort()).toEqual([]);
    const stores = sources.filter((f) => f.endsWith('.store.ts') && moduleOf(rel(f)));
    expect(stores.length).toBeGreaterThan(10);
    expect(stores.flatMap((f) => foreignTables(rel(f), fs.readFileSync(f, 'utf8'), owners))).toEqual([]);
  });
});

describe('the rules can fail', () => {
  const i = (target: string, typeOnly = false): Import => ({ target, typeOnly });

  it('(a) sees an import of a file inside another module, type-only ones too', () => {
    const files = [
      {
        file: 'src/modules/payments/payment.service.ts',
        imports: [i('src/modules/invoices/invoice.service', true), i('src/modules/customers')],
      },
      { file: 'src/http/request.ts', imports: [i('src/modules/merchants/current-merchant')] },
      { file: 'src/modules/payments/payment.store.ts', imports: [i('src/modules/payments/payment.entities')] },
    ];
    expect(bypassingIndex(files)).toEqual([
      'src/modules/payments/payment.service.ts -> src/modules/invoices/invoice.service',
      'src/http/request.ts -> src/modules/merchants/current-merchant',
    ]);
  });

  it('(b) sees an import of a module the importer does not declare', () => {
    const files = [
      {
        file: 'src/modules/customers/customer.resolver.ts',
        imports: [i('src/modules/subscriptions'), i('src/modules/merchants')],
      },
    ];
    expect(undeclared(files, { customers: ['merchants'] })).toEqual([
      'customers -> subscriptions (src/modules/customers/customer.resolver.ts)',
    ]);
  });

  it('(c) sees a cycle in the table, in the imports, and at runtime across modules', () => {
    expect(moduleCycles([], { a: ['b'], b: ['c'], c: ['a'], d: [] })).toEqual([['a', 'b', 'c']]);
    const files = [
      { file: 'src/modules/usage/usage.billing.ts', imports: [i('src/modules/subscriptions')] },
      { file: 'src/modules/subscriptions/subscription.lifecycle.ts', imports: [i('src/modules/usage', true)] },
    ];
    expect(moduleCycles(files, {})).toEqual([['subscriptions', 'usage']]);
    const runtime = [
      { file: 'src/modules/usage/usage.billing.ts', imports: [i('src/modules/subscriptions/change-plan')] },
      {
        file: 'src/modules/subscriptions/change-plan.ts',
        imports: [i('src/modules/subscriptions/subscription.lifecycle')],
      },
      { file: 'src/modules/subscriptions/subscription.lifecycle.ts', imports: [i('src/modules/usage/usage.billing')] },
      // Type-only: no runtime cycle through here.
      { file: 'src/modules/payments/payment.service.ts', imports: [i('src/modules/invoices/invoice.service')] },
      { file: 'src/modules/invoices/invoice.service.ts', imports: [i('src/modules/payments/payment.service', true)] },
    ];
    expect(runtimeCycles(runtime, (t) => `${t}.ts`)).toEqual([
      [
        'src/modules/subscriptions/change-plan.ts',
        'src/modules/subscriptions/subscription.lifecycle.ts',
        'src/modules/usage/usage.billing.ts',
      ],
    ]);
  });

  it('(d) sees src/money import the domain, core included', () => {
    const files = [
      {
        file: 'src/money/gst.ts',
        imports: [i('src/money/rounding'), i('src/core/errors'), i('src/modules/invoices', true)],
      },
    ];
    expect(moneyLeaks(files)).toEqual([
      'src/money/gst.ts -> src/core/errors',
      'src/money/gst.ts -> src/modules/invoices',
    ]);
  });

  it("(e) sees another module's table in a store's SQL, but not in its comments", () => {
    const owners = {
      experiments: 'experiments',
      payments: 'payments',
      invoices: 'invoices',
      subscriptions: 'subscriptions',
    };
    const text = [
      '// reads from invoices, once',
      'const a = sql`select * from experiments e join payments p on p.id = e.id`;',
      'const b = \'update "subscriptions" set x = 1\';',
      "const c = 'insert into invoices (id) values (1)';",
    ].join('\n');
    const store = 'src/modules/experiments/experiment.store.ts';
    expect(foreignTables(store, text, owners)).toEqual([
      `${store}: payments (payments)`,
      `${store}: subscriptions (subscriptions)`,
      `${store}: invoices (invoices)`,
    ]);
  });

  it('tells type-only imports from runtime ones', () => {
    const text = [
      "import type { A } from '../a';",
      "import {\n  B,\n  C,\n} from '../b';",
      "export type { D } from './d';",
      "export { E } from './e';",
      "const f = require('../f');",
    ].join('\n');
    expect(importsOf(path.join(root, 'src/modules/x/y.ts'), text)).toEqual([
      i('src/modules/a', true),
      i('src/modules/b'),
      i('src/modules/x/d', true),
      i('src/modules/x/e'),
      i('src/modules/f'),
    ]);
  });
});
