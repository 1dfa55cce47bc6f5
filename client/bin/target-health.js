#!/usr/bin/env node
// The `target-health` binary: the compiled CLI (run `npm run build` first; `npm start` and `npm test` do).
require('../../dist/client/main.js');
