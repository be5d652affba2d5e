/* Loads the TypeScript sources in a plain Node process (no jest VM), compiled by swc with the repository's .swcrc. */
const fs = require('node:fs');
const path = require('node:path');
const swc = require('@swc/core');

const root = path.resolve(__dirname, '../..');
const options = JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8'));
delete options.$schema;

require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename, swcrc: false });
  module._compile(code, filename);
};
