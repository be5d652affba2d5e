import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * `npm start`'s build (scripts/build-changed.js): compiles only the sources whose dist/ file is missing or older, says
 * so, and its output runs with decorator metadata as tsc's does (type-graphql and MikroORM read it).
 */
const ROOT = path.resolve(__dirname, '../..');
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-build-'));
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.copyFileSync(path.join(ROOT, 'scripts/build-changed.js'), path.join(dir, 'scripts/build-changed.js'));
  fs.copyFileSync(path.join(ROOT, '.swcrc'), path.join(dir, '.swcrc'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.mkdirSync(path.join(dir, 'src/inner'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src/inner/thing.ts'), `export class Thing { constructor(readonly n: number) {} }\n`);
  fs.writeFileSync(
    path.join(dir, 'src/main.ts'),
    `import 'reflect-metadata';
import { Thing } from './inner/thing';
const mark = (): PropertyDecorator => () => undefined;
class Holder { @mark() thing!: Thing; }
const type = Reflect.getMetadata('design:type', Holder.prototype, 'thing');
console.log(JSON.stringify({ metadata: type === Thing, n: new Thing(VALUE).n }));
`.replace('VALUE', '1'),
  );
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const build = () => execFileSync('node', ['scripts/build-changed.js'], { cwd: dir, encoding: 'utf8' });
const run = () => JSON.parse(execFileSync('node', ['dist/src/main.js'], { cwd: dir, encoding: 'utf8' }));

it('builds what is missing, then nothing, then only what changed, and the output runs', () => {
  expect(build()).toMatch(/^Building 2 changed files into dist\/ \.\.\. done in \d+ ms/);
  expect(run()).toEqual({ metadata: true, n: 1 });

  expect(build()).toBe(''); // up to date: silent and quick

  const main = path.join(dir, 'src/main.ts');
  fs.writeFileSync(main, fs.readFileSync(main, 'utf8').replace('new Thing(1)', 'new Thing(2)'));
  const later = new Date(Date.now() + 2_000); // a later mtime whatever the file system's resolution
  fs.utimesSync(main, later, later);
  expect(build()).toMatch(/^Building 1 changed file into dist\/ /);
  expect(run()).toEqual({ metadata: true, n: 2 });
});

it('fails loudly on a source it cannot compile', () => {
  fs.writeFileSync(path.join(dir, 'src/broken.ts'), 'export const = ;\n');
  expect(() => execFileSync('node', ['scripts/build-changed.js'], { cwd: dir, stdio: 'pipe' })).toThrow(/broken\.ts/);
  fs.rmSync(path.join(dir, 'src/broken.ts'));
});
