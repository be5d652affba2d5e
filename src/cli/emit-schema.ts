import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { openApiDocument } from '../../rest-shim/openapi';
import { createSchema, printSortedSchema } from '../schema';

/** `npm run schema:emit`: writes schema/schema.graphql and schema/openapi.json (a test fails when they are stale). */
export async function emittedFiles(): Promise<Record<string, string>> {
  const schema = await createSchema();
  return {
    'schema.graphql': printSortedSchema(schema),
    'openapi.json': JSON.stringify(openApiDocument(schema), null, 2) + '\n',
  };
}

if (require.main === module) {
  emittedFiles().then((files) => {
    const dir = path.resolve(__dirname, '../../../schema');
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    process.stdout.write(
      `Wrote ${Object.keys(files)
        .map((f) => `schema/${f}`)
        .join(', ')}\n`,
    );
  });
}
