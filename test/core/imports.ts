import fs from 'node:fs';
import path from 'node:path';

/** Reading the import statements of the sources, for the layout tests (architecture, boundaries). */

export const root = path.resolve(__dirname, '../..');

export const rel = (f: string) => path.relative(root, f);

export function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** One relative import, resolved against the repository root (no extension); `typeOnly`: erased when compiled. */
export interface Import {
  target: string;
  typeOnly: boolean;
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** Where the import or export statement holding the specifier at `index` begins (its line starts with the keyword). */
function statementStart(text: string, index: number): number {
  let i = text.lastIndexOf('\n', index - 1) + 1;
  while (i > 0 && !/^\s*(?:import|export)\b/.test(text.slice(i, i + 40))) i = text.lastIndexOf('\n', i - 2) + 1;
  return i;
}

/**
 * Every relative module a file imports (`import ... from`, `import type`, `export ... from`, `import()`,
 * `require()`), resolved against the repository root. `import type` / `export type` statements are type-only.
 */
export function importsOf(file: string, text = fs.readFileSync(file, 'utf8')): Import[] {
  const out: Import[] = [];
  for (const m of text.matchAll(IMPORT)) {
    if (!m[1].startsWith('.')) continue;
    // A dynamic import or require is always a runtime one; otherwise the statement's first line tells.
    const typeOnly =
      !m[0].includes('(') && /^\s*(?:import|export)\s+type\b/.test(text.slice(statementStart(text, m.index)));
    out.push({ target: path.relative(root, path.resolve(path.dirname(file), m[1])), typeOnly });
  }
  return out;
}

/** The targets of `importsOf`. */
export function relativeImports(file: string, text?: string): string[] {
  return importsOf(file, text).map((i) => i.target);
}
