import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the dashboard and the portal, generated from the service's checked-in schema. `npm run build`
 * regenerates them; a test (test/web-codegen.test.ts) fails when the checked-in output is stale or a document no
 * longer matches the schema.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['web/src/**/*.tsx', 'web/src/**/*.ts', '!web/src/gql/**/*'],
  ignoreNoDocuments: false,
  generates: {
    'web/src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: {
          DateTimeISO: 'string',
          SafeInt: 'number',
          JSONObject: 'Record<string, unknown>',
          JSON: 'unknown',
        },
      },
    },
  },
};
export default config;
