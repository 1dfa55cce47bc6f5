'use strict';
// is-antibot 2.5.15 imports only parseUrl from @metascraper/helpers, which is tldts.parse memoised
// (metascraper's src/index.js: `const parseUrl = memoize(tldts.parse)`); memoising changes no result.
const { parse } = require('tldts');

module.exports = { parseUrl: (url) => parse(url) };
