/**
 * `target-health classify`, `markers test` and `markers check` as a user runs them (the built CLI): the
 * verdict on a saved page explained down to where the marker matched, a deployment's marker file used
 * when TARGET_HEALTH_MARKERS is set, recall and precision on a user's own pages, and bad input refused
 * with one line naming the argument or field, exit 2, no stack trace.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';

let dir: string;
const SHOP_PAGE =
  '<html>\n<head><title>Example Shop</title></head>\n<body>\n  <p>Our shop has paused your visits for ' +
  'now.</p>\n</body></html>\n';
const AKAMAI = join(__dirname, '..', 'fixtures', 'real-pages', 'akamai--accept-www.ing.nl.html');
const SHOP_MARKERS = {
  version: 1,
  markers: [{ id: 'shop-wall', vendor: 'Example Shop', kind: 'block', bodyAny: ['paused your visits'] }],
  disable: ['recaptcha-widget'],
};

beforeAll(() => {
  dir = mkdtempSync(join(env('TH_TEST_DIR'), 'classify-cli-'));
  writeFileSync(join(dir, 'shop.html'), SHOP_PAGE);
  writeFileSync(join(dir, 'markers.json'), JSON.stringify(SHOP_MARKERS));
  writeFileSync(
    join(dir, 'bad-markers.json'),
    JSON.stringify({ version: 1, markers: [{ id: 'x', vendor: 'X', kind: 'block', bodyRegex: '(\\w+)*$' }] }),
  );
  const pages = join(dir, 'pages');
  mkdirSync(pages);
  writeFileSync(join(pages, 'hard_block--example-shop.html'), SHOP_PAGE);
  writeFileSync(join(pages, 'ok--lamps.html'), '<html><title>Lamps</title><p>Desk lamps, floor lamps.</p></html>');
});

test('classify explains a real Akamai page: rule, marker, vendor, evidence and where it matched', async () => {
  const r = await run(CLI, ['classify', AKAMAI, '--status', '403', '--json'], cleanEnv({}));
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(out).toMatchObject({
    outcome: 'hard_block',
    rule: 'block_marker',
    markers: { source: 'built-in' },
    page: { status: 403, bytes: 271 },
    marker: { vendor: 'Akamai', kind: 'block', evidence: 'strong', where: { line: 2 } },
  });
  const text = await run(CLI, ['classify', AKAMAI, '--status', '403'], cleanEnv({}));
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/^outcome: +hard_block\nrule: +block_marker\n/);
  expect(text.stdout).toMatch(/\nwhere: +character \d+ \(line 2, column \d+\): .*Access Denied/);
});

test('classify with headers, and with the deployment marker file', async () => {
  const headers = await run(
    CLI,
    ['classify', join(dir, 'shop.html'), '--header', 'CF-Mitigated: challenge', '--json'],
    cleanEnv({}),
  );
  expect(headers.code).toBe(0);
  expect(JSON.parse(headers.stdout)).toMatchObject({
    outcome: 'challenge',
    marker: { id: 'cloudflare-mitigated-header', matched: 'header cf-mitigated: challenge' },
  });
  expect((JSON.parse(headers.stdout) as { marker: { where?: unknown } }).marker.where).toBeUndefined();

  const builtIn = await run(CLI, ['classify', join(dir, 'shop.html'), '--json'], cleanEnv({}));
  expect(JSON.parse(builtIn.stdout)).toMatchObject({ outcome: 'ok', rule: 'status' });
  const withFile = await run(
    CLI,
    ['classify', join(dir, 'shop.html')],
    cleanEnv({ TARGET_HEALTH_MARKERS: join(dir, 'markers.json') }),
  );
  expect(withFile.stderr).toBe('');
  expect(withFile.stdout).toMatch(/\nmarker: +shop-wall \(Example Shop; block, strong evidence\)\n/);
  // "paused" is on line 4 of the saved page, after "  <p>Our shop has ".
  expect(withFile.stdout).toMatch(/\nwhere: +character 73 \(line 4, column 19\): /);
  expect(withFile.stdout).toContain(`markers:      ${join(dir, 'markers.json')}`);
});

test('markers test: recall and precision per vendor, with and without the marker file', async () => {
  const pages = join(dir, 'pages');
  const before = await run(CLI, ['markers', 'test', pages, '--json'], cleanEnv({}));
  expect(before.code).toBe(0);
  const b = JSON.parse(before.stdout) as { modes: Array<{ overall: { recall: number; falsePositives: number } }> };
  expect(b.modes.map((m) => m.overall.recall)).toEqual([0, 0, 0]);
  const after = await run(
    CLI,
    ['markers', 'test', pages],
    cleanEnv({ TARGET_HEALTH_MARKERS: join(dir, 'markers.json') }),
  );
  expect(after.stderr).toBe('');
  expect(after.code).toBe(0);
  expect(after.stdout).toMatch(/^2 pages from .*pages; markers: .*markers\.json/);
  expect(after.stdout).toMatch(/\nexample-shop +1 +0 +100\.0 % 1\/1 +100\.0 % +100\.0 % 1\/1 +0\n/);
});

test('markers check: a valid file summarised, a bad one refused with the field', async () => {
  const good = await run(CLI, ['markers', 'check', join(dir, 'markers.json')], cleanEnv({}));
  expect(good.code).toBe(0);
  expect(good.stdout).toMatch(
    /valid, \d+ markers in all\n {2}added: +shop-wall\n {2}replaced: +none\n {2}disabled: +recaptcha-widget\n/,
  );
  const bad = await run(CLI, ['markers', 'check', join(dir, 'bad-markers.json')], cleanEnv({}));
  expect(bad.code).toBe(2);
  expect(bad.stdout).toBe('');
  expect(bad.stderr).toMatch(
    /^target-health: .*bad-markers\.json: markers\[0\]\.bodyRegex: has a quantified group containing a quantifier.*\n$/,
  );
});

test.each<[string, string[], Record<string, string>, RegExp]>([
  [
    'a missing page',
    ['classify', 'no-such-page.html'],
    {},
    /^target-health: <saved page>: cannot read "no-such-page\.html" \(ENOENT\)\n$/,
  ],
  [
    'a bad status',
    ['classify', AKAMAI, '--status', '2000'],
    {},
    /^target-health: --status: must be an HTTP status code from 100 to 999 \(got "2000"\)\n$/,
  ],
  ['a bad header', ['classify', AKAMAI, '--header', 'no colon'], {}, /^target-health: --header: must be name:value/],
  [
    'a bad marker file in the environment',
    ['classify', AKAMAI],
    { TARGET_HEALTH_MARKERS: 'BAD' },
    /^target-health: TARGET_HEALTH_MARKERS: .*bad-markers\.json: markers\[0\]\.bodyRegex: /,
  ],
  [
    'a directory that is not there',
    ['markers', 'test', 'no-such-dir'],
    {},
    /^target-health: <dir>: "no-such-dir" is not a directory of labelled pages\n$/,
  ],
  [
    'a badly named page',
    ['markers', 'test', '.'],
    {},
    /^target-health: .*: name it <class>--<vendor or anything>\.html with <class> one of challenge, hard_block/,
  ],
])('%s: one line, exit 2', async (_what, args, extra, message) => {
  writeFileSync(join(dir, 'page.html'), '<p>hello</p>');
  const environment = Object.fromEntries(
    Object.entries(extra).map(([k, v]) => [k, v === 'BAD' ? join(dir, 'bad-markers.json') : v]),
  );
  const r = await run(
    CLI,
    args.map((a) => (a === '.' ? dir : a)),
    cleanEnv(environment),
  );
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
});
