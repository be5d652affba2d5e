#!/usr/bin/env node
'use strict';
/**
 * The package's `cadence` command (`npx cadence`, docs/cli.md): brings dist/ up to date the way `npm start` does
 * (progress on stderr, so the command's own output stays clean), then runs the CLI in src/cli/cadence.ts.
 */
const path = require('node:path');
const { buildChanged } = require('./build-changed');

buildChanged(process.stderr).then(
  () => require(path.join(__dirname, '..', 'dist', 'src', 'cli', 'cadence.js')).runCli(),
  (err) => {
    process.stderr.write(`\n${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
