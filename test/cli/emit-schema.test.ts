import fs from 'node:fs';
import path from 'node:path';
import { emittedFiles } from '../../src/cli/emit-schema';

// The checked-in contracts are generated: run `npm run schema:emit` after changing the API.
describe('generated contracts are current', () => {
  it.each(['schema.graphql', 'openapi.json'])('schema/%s matches the code', async (name) => {
    const files = await emittedFiles();
    const checkedIn = fs.readFileSync(path.join(__dirname, '..', '..', 'schema', name), 'utf8');
    expect(checkedIn).toBe(files[name]);
  });
});
