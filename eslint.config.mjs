// Lint: typescript-eslint's recommended rules everywhere, import cycles refused in the service (src/).
// Formatting is Prettier's job (`npm run format`), so no stylistic rules here.
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', '.data/', '.test-data/', 'web/src/gql/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      // `_`-prefixed names are the codebase's way of saying "unused on purpose" (positional parameters, skipped
      // tuple slots, destructuring a field out of a rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Control characters in patterns are deliberate: stripping ANSI colours from log lines, refusing NUL and
      // other C0 characters in input.
      'no-control-regex': 'off',
    },
  },
  {
    // Untyped JSON is read as `any` on purpose where its shape belongs to someone else: gateway payloads (the SDK
    // typings lag the APIs; sandbox objects are free-form JSON) and, in tests and benchmarks, the service's own
    // answers, whose shapes the schema and the assertions already state.
    files: ['src/gateways/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // A cycle makes module initialisation order matter (a class or constant read before its module ran).
    // Type-only imports are erased at compile time and do not count.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    // One import statement per module (a type-only import beside a value import is fine).
    rules: { 'import-x/no-cycle': 'error', 'import-x/no-duplicates': 'error' },
  },
  {
    // CommonJS configuration and the test loader hook.
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
