import fs from 'node:fs';
import path from 'node:path';
import { rel, relativeImports, root, sourceFiles } from './imports';

/**
 * The dependency rules of the layout (docs/architecture.md): src/core knows no module, and the gateway sandbox could be
 * split out as its own package. Read from the import statements of the sources, so a new file is checked as soon as it
 * exists.
 */

describe('src/core', () => {
  const files = sourceFiles(path.join(root, 'src/core'));

  it('has files to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it('imports nothing from modules, gateways, transports, the composition root or the entity list', () => {
    // Core may import core, src/migrations (the service's schema history, which imports nothing) and the money kernel
    // (which imports nothing of src either).
    const under = (target: string, dir: string) => target === dir || target.startsWith(`${dir}/`);
    const allowed = (target: string) =>
      target.startsWith('src/core/') || under(target, 'src/migrations') || under(target, 'src/money');
    const offending = files.flatMap((f) =>
      relativeImports(f)
        .filter((t) => !allowed(t))
        .map((t) => `${rel(f)} -> ${t}`),
    );
    expect(offending).toEqual([]);
  });
});

describe('src/gateways/sandbox', () => {
  const dir = path.join(root, 'src/gateways/sandbox');
  const files = sourceFiles(dir);
  /**
   * What the sandbox may import from outside its folder: the gateway port (types), the currency tables (ISO and
   * per gateway), the money kernel (pure arithmetic and printing: the hosted pages print amounts with it), and four
   * dependency-free helpers (the logger, the JSON nesting limit, the NUL check, the e-invoice IRN formula).
   */
  const ALLOWED = new Set([
    'src/gateways/port',
    'src/gateways/amounts',
    'src/money',
    'src/core/currency',
    'src/core/logger',
    'src/core/input-limits',
    'src/core/nul',
    'src/core/irn',
  ]);

  it('imports only its own files, the port types, the currency tables and the allowed helpers', () => {
    const offending = files.flatMap((f) =>
      relativeImports(f)
        .filter((t) => !t.startsWith('src/gateways/sandbox/') && t !== 'src/gateways/sandbox' && !ALLOWED.has(t))
        .map((t) => `${rel(f)} -> ${t}`),
    );
    expect(offending).toEqual([]);
  });

  it('has its own entities and migrations, and the service lists neither', () => {
    expect(fs.existsSync(path.join(dir, 'migrations/index.ts'))).toBe(true);
    const serviceEntities = fs.readFileSync(path.join(root, 'src/entities.ts'), 'utf8');
    expect(serviceEntities).not.toMatch(/from '[^']*sandbox/);
  });
});

it('the check can fail: it sees every form of import', () => {
  const file = path.join(root, 'src/core/probe.ts');
  const text = [
    "import type { Services } from '../services';",
    "import { x } from '../modules/payments/payment.service';",
    "export { y } from '../http/request';",
    "const z = require('../container');",
    "import '../entities';",
  ].join('\n');
  expect(relativeImports(file, text)).toEqual([
    'src/services',
    'src/modules/payments/payment.service',
    'src/http/request',
    'src/container',
    'src/entities',
  ]);
});
