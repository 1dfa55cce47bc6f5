/**
 * `target-health canary …` as a real process against the test PostgreSQL: bad definitions are refused
 * at definition time with one line per problem naming the field (or flag) and the fix, and nothing is
 * written; good ones are saved, listed, run (through a real local proxy) and removed.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listCanaries } from '../../server/db/canaries';
import { createPool, type Pool } from '../../server/db/pool';
import { upsertSite } from '../../server/db/sites';
import {
  answer,
  type FixtureServer,
  type ForwardProxy,
  KNOWN_PRICE,
  productPage,
  startFixtureServer,
  startForwardProxy,
} from '../kit/http-fixtures';
import { CLI, cleanEnv, run, type Finished } from '../kit/processes';
import { env } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

let pool: Pool;
let server: FixtureServer;
let proxy: ForwardProxy;
let dir: string;
let site: string;

// The fixture servers listen on 127.0.0.1: the operator opts in with TARGET_HEALTH_CANARY_ALLOWED_TARGETS.
const cliEnv = (extra: Record<string, string> = {}) =>
  cleanEnv({
    DATABASE_URL: env('DATABASE_URL'),
    TARGET_HEALTH_ROUTES: JSON.stringify({ local: proxy.url }),
    TARGET_HEALTH_CANARY_TIMEOUT_MS: '3000',
    TARGET_HEALTH_CANARY_ALLOWED_TARGETS: '127.0.0.1',
    LOG_LEVEL: 'error',
    ...extra,
  });
const canary = (args: string[], extra?: Record<string, string>) => run(CLI, ['canary', ...args], cliEnv(extra));

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** Exit code 2, the expected lines on stderr (the first prefixed by the binary name), no stack trace. */
function expectRefused(result: Finished, lines: Array<string | RegExp>): void {
  expect(result.stdout).toBe('');
  expect(result.code).toBe(2);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  const got = result.stderr.trimEnd().split('\n');
  expect(got).toHaveLength(lines.length);
  lines.forEach((line, i) => {
    const actual = i === 0 ? (got[0] ?? '').replace(/^target-health: /, '') : (got[i] ?? '');
    if (typeof line === 'string') expect(actual).toBe(line);
    else expect(actual).toMatch(line);
  });
  expect(got[0]).toMatch(/^target-health: /);
}

async function storedCount(s = site): Promise<number> {
  return (await listCanaries(pool, s)).length;
}

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  dir = mkdtempSync(join(process.env.TH_TEST_DIR ?? tmpdir(), 'canary-cli-'));
  [server, proxy] = await Promise.all([
    startFixtureServer({ '/p/known': answer.html(productPage()), '/p/changed': answer.html(productPage('$119.95')) }),
    startForwardProxy({ auth: { user: 'crawler', password: 'hunter2' } }),
  ]);
  site = `cli-${randomUUID().slice(0, 8)}.example.com`;
  await upsertSite(pool, site);
});
afterAll(async () => {
  await Promise.all([server.close(), proxy.close(), pool.end()]);
});

describe('bad definitions are refused at definition time, nothing written', () => {
  test('invalid CSS selector (flags and file)', async () => {
    expectRefused(
      await canary([
        'add',
        site,
        '--url',
        `${server.origin}/p/known`,
        '--expect-text',
        '.price[',
        '--equals',
        KNOWN_PRICE,
      ]),
      [
        '--expect-text: ".price[" is not a valid CSS selector (Expected name, found); fix the selector, e.g. ' +
          '".price" or "span[itemprop=price]"',
      ],
    );
    const path = file('bad-selector.json', {
      url: `${server.origin}/p/known`,
      expect: [{ css: 'div:hovering', equals: '1' }],
    });
    expectRefused(await canary(['add', site, '--file', path]), [
      `${path}: expect[0].css: "div:hovering" is not a valid CSS selector (Unknown pseudo-class :hovering); ` +
        `fix the selector, e.g. ".price" or "span[itemprop=price]"`,
    ]);
    expect(await storedCount()).toBe(0);
  });

  test('malformed proxy URL', async () => {
    expectRefused(
      await canary([
        'add',
        site,
        '--url',
        `${server.origin}/p/known`,
        '--proxy',
        'localhost:8080',
        '--expect-text',
        '.price',
        '--equals',
        KNOWN_PRICE,
      ]),
      [
        '--proxy: "localhost:8080" is not a proxy URL; use http://host:port or http://user:password@host:port ' +
          '(https:// for a TLS proxy)',
      ],
    );
    const r = await canary([
      'add',
      site,
      '--url',
      `${server.origin}/p/known`,
      '--proxy',
      'http://user:topsecret@gw.example',
      '--expect-status',
      '200',
    ]);
    expectRefused(r, [
      '--proxy: "http://user:***@gw.example" has no port; use http://host:port or ' +
        'http://user:password@host:port (https:// for a TLS proxy)',
    ]);
    expect(r.stderr).not.toContain('topsecret');
    expect(await storedCount()).toBe(0);
  });

  test('page credentials in --url or in a file are refused, never echoed', async () => {
    const url = `http://crawler:hunter2-page@127.0.0.1:${server.port}/p/known`;
    const fix =
      'holds credentials (user:password@); page credentials are not supported: remove them and point the ' +
      'canary at a page anyone can load (give a route or proxy for how it travels)';
    const flags = await canary(['add', site, '--url', url, '--expect-status', '200']);
    expectRefused(flags, [`--url: "http://***@127.0.0.1:${server.port}/p/known" ${fix}`]);
    const path = file('page-credentials.json', { canaries: [{ site, name: 'login', url, expect: [{ status: 200 }] }] });
    const imported = await canary(['import', path]);
    expectRefused(imported, [`${path}: canaries[0].url: "http://***@127.0.0.1:${server.port}/p/known" ${fix}`]);
    expect(flags.stderr + imported.stderr).not.toContain('hunter2-page');
    expect(await storedCount()).toBe(0);
  });

  test('negative and zero intervals', async () => {
    const add = (interval: string) =>
      canary(['add', site, '--url', `${server.origin}/p/known`, '--interval', interval, '--expect-status', '200']);
    expectRefused(await add('-5m'), ['--interval: must be a positive duration like "15m" (got "-5m")']);
    expectRefused(await add('0s'), ['--interval: must be a positive duration like "15m" (got "0s")']);
    const path = file('negative.json', { url: `${server.origin}/p/known`, interval: -60, expect: [{ status: 200 }] });
    expectRefused(await canary(['add', site, '--file', path]), [
      `${path}: interval: must be a positive duration like "15m" (got -60)`,
    ]);
    expect(await storedCount()).toBe(0);
  });

  test('unknown site', async () => {
    const unknown = `nobody-${randomUUID().slice(0, 8)}.example.com`;
    expectRefused(await canary(['add', unknown, '--url', `${server.origin}/p/known`, '--expect-status', '200']), [
      `site: ${unknown} is not a registered site; register it with \`target-health start ${unknown}\` first`,
    ]);
    expect(await storedCount(unknown)).toBe(0);
  });

  test('unknown route label', async () => {
    expectRefused(
      await canary([
        'add',
        site,
        '--url',
        `${server.origin}/p/known`,
        '--route',
        'residential-de',
        '--expect-status',
        '200',
      ]),
      ['--route: unknown route label "residential-de"; labels in TARGET_HEALTH_ROUTES: local'],
    );
    expect(await storedCount()).toBe(0);
  });

  test('a config file with several problems: one line each, and its valid entries are not written either', async () => {
    const unknown = `nobody-${randomUUID().slice(0, 8)}.example.com`;
    const bad = file('bad.json', {
      canaries: [
        { site, name: 'fine', url: `${server.origin}/p/known`, expect: [{ css: '.price', equals: KNOWN_PRICE }] },
        { site, name: 'selector', url: `${server.origin}/p/known`, expect: [{ css: '.price[', equals: KNOWN_PRICE }] },
        {
          site,
          name: 'proxy',
          url: `${server.origin}/p/known`,
          proxy: 'ftp://gw.example:21',
          expect: [{ status: 200 }],
        },
        { site, name: 'interval', url: `${server.origin}/p/known`, interval: '-1h', expect: [{ status: 200 }] },
      ],
    });
    expectRefused(await canary(['import', bad]), [
      /^.*bad\.json: canaries\[1\]\.expect\[0\]\.css: "\.price\[" is not a valid CSS selector/,
      joinRegExp(
        /^.*bad\.json: canaries\[2\]\.proxy: "ftp:\/\/gw\.example:21" /,
        /has scheme "ftp"; only HTTP\(S\) proxies are supported/,
      ),
      /^.*bad\.json: canaries\[3\]\.interval: must be a positive duration like "15m" \(got "-1h"\)$/,
    ]);
    const unknownSite = file('unknown-site.json', {
      canaries: [
        { site, name: 'fine', url: `${server.origin}/p/known`, expect: [{ css: '.price', equals: KNOWN_PRICE }] },
        { site: unknown, name: 'elsewhere', url: `${server.origin}/p/known`, expect: [{ status: 200 }] },
      ],
    });
    expectRefused(await canary(['import', unknownSite]), [
      `${unknownSite}: canaries[1].site: ${unknown} is not a registered site; register it with \`target-health ` +
        `start ${unknown}\` first`,
    ]);
    expect(await storedCount()).toBe(0);
  });

  test('files: YAML is refused with a conversion hint, JSON errors are named, file and flags do not mix', async () => {
    const yaml = file('canaries.yaml', 'canaries: []\n');
    expectRefused(await canary(['import', yaml]), [
      /canaries\.yaml: canary files are JSON \(the service ships no YAML parser\); convert it, e.g. `yq -o=json /,
    ]);
    const broken = file('broken.json', '{"canaries": [');
    expectRefused(await canary(['import', broken]), [/broken\.json: not valid JSON \(/]);
    expectRefused(await canary(['import', join(dir, 'missing.json')]), [
      /missing\.json: cannot read the file \(ENOENT\)$/,
    ]);
    const one = file('one.json', { url: `${server.origin}/p/known`, expect: [{ status: 200 }] });
    expectRefused(await canary(['add', site, '--file', one, '--url', 'https://x.example.com/']), [
      '--file: give the canary either as a file or as flags, not both (also got --url)',
    ]);
  });

  test('a pattern the linear-time engine cannot run (flags and file)', async () => {
    const startsWith = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
    const lookahead = '^(?=\\$)\\$\\d+';
    expectRefused(
      await canary([
        'add',
        site,
        '--url',
        `${server.origin}/p/known`,
        '--expect-text',
        '.price',
        '--matches',
        lookahead,
      ]),
      [
        startsWith(
          `--matches: ${JSON.stringify(lookahead)} is not a valid regular expression here (invalid or ` +
            `unsupported Perl syntax: \`(?=\`); canary patterns run on RE2 in linear time: no lookahead`,
        ),
      ],
    );
    const backreference = '(\\d)\\1';
    const path = file('backreference.json', {
      url: `${server.origin}/p/known`,
      expect: [{ css: '.price', matches: backreference }],
    });
    expectRefused(await canary(['add', site, '--file', path]), [
      startsWith(
        `${path}: expect[0].matches: ${JSON.stringify(backreference)} is not a valid regular expression here ` +
          `(invalid escape sequence`,
      ),
    ]);
    expect(await storedCount()).toBe(0);
  });

  test('an internal address is refused unless the operator allows it', async () => {
    // The Temporal UI's API on this machine: what a canary once fetched, showing another site's workflows.
    const temporalUi = 'http://127.0.0.1:8233/api/v1/namespaces/default/workflows';
    expectRefused(
      await canary(['add', site, '--url', temporalUi, '--expect-status', '200'], {
        TARGET_HEALTH_CANARY_ALLOWED_TARGETS: '',
      }),
      [
        `--url: "${temporalUi}" is an IP address, not a page of ${site}; a canary may only fetch its own site ` +
          `(${site} or its subdomains) — an operator can allow this address with ` +
          `TARGET_HEALTH_CANARY_ALLOWED_TARGETS="127.0.0.1"`,
      ],
    );
    const other = file('other-site.json', {
      canaries: [{ site, name: 'elsewhere', url: 'https://intranet.example.net/admin', expect: [{ status: 200 }] }],
    });
    expectRefused(await canary(['import', other]), [
      `${other}: canaries[0].url: "https://intranet.example.net/admin" is not on ${site}; a canary may only ` +
        `fetch its own site (${site} or its subdomains) — an operator can allow other hosts with ` +
        `TARGET_HEALTH_CANARY_ALLOWED_TARGETS="intranet.example.net"`,
    ]);
    expect(await storedCount()).toBe(0);
  });

  test('a malformed TARGET_HEALTH_ROUTES stops the command with one line', async () => {
    expectRefused(
      await canary(['add', site, '--url', `${server.origin}/p/known`, '--expect-status', '200'], {
        TARGET_HEALTH_ROUTES: '{"local": "127.0.0.1:3128"}',
      }),
      [
        'TARGET_HEALTH_ROUTES: label "local": "127.0.0.1:3128" is not a proxy URL; use http://host:port or ' +
          'http://user:password@host:port (https:// for a TLS proxy)',
      ],
    );
  });
});

describe('defining, listing, running and removing canaries', () => {
  test('add with flags, import a file, list, run through the proxy, remove', async () => {
    const added = await canary([
      'add',
      site,
      '--name',
      'price',
      '--url',
      `${server.origin}/p/known`,
      '--route',
      'local',
      '--interval',
      '10m',
      '--expect-text',
      '.price',
      '--equals',
      KNOWN_PRICE,
      '--expect-absent',
      'out of stock',
    ]);
    expect(added.stderr).toBe('');
    expect(added).toMatchObject({ code: 0, stdout: `created ${site}/price (every 10m, route local, 2 checks)\n` });

    const config = file('site-canaries.json', {
      canaries: [
        {
          site,
          name: 'changed',
          url: `${server.origin}/p/changed`,
          proxy: proxy.url,
          expect: [{ css: '.price', equals: KNOWN_PRICE }],
        },
        { site, name: 'listing', url: `${server.origin}/p/known`, expect: [{ css: '.review', atLeast: 10 }] },
      ],
    });
    expect(await canary(['import', config])).toMatchObject({
      code: 0,
      stdout: `${config}: 2 created, 0 updated, 0 unchanged\n`,
    });
    expect(await canary(['import', config])).toMatchObject({
      code: 0,
      stdout: `${config}: 0 created, 0 updated, 2 unchanged\n`,
    });

    const listed = await canary(['list', site]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${site}/price`);
    expect(listed.stdout).toContain('not run yet');
    expect(listed.stdout).toContain(`proxy http://crawler:***@127.0.0.1:${proxy.port}`);
    expect(listed.stdout).not.toContain('hunter2');

    const seenBefore = proxy.seen.length;
    const ran = await canary(['run', site]);
    expect(ran.stderr).toBe('');
    // A mismatch: the command reports it and exits 1 (usable in scripts and CI smoke checks).
    expect(ran.code).toBe(1);
    const lines = ran.stdout.split('\n');
    expect(lines.find((l) => l.startsWith(`${site}/changed `))).toMatch(
      joinRegExp(
        / mismatch +200 .*proxy 127\.0\.0\.1:\d+ +/,
        /wrong value on a normal-looking page: \.price text equals "\$139\.95", got "\$119\.95"$/,
      ),
    );
    expect(lines.find((l) => l.startsWith(`${site}/price `))).toMatch(
      / pass +200 .*route local +status 200; all 2 checks hold$/,
    );
    expect(lines.find((l) => l.startsWith(`${site}/listing `))).toMatch(/ pass +200 .*direct/);
    expect(ran.stdout).toContain(`  ${site}/changed: .price text equals "$139.95": expected "$139.95", got "$119.95"`);
    expect(proxy.seen.length - seenBefore).toBe(2);

    const json = await canary(['list', site, '--json']);
    const parsed = JSON.parse(json.stdout) as Array<{
      id: string;
      definition: { proxy?: string };
      latest: { result: string; trigger: string } | null;
    }>;
    expect(parsed.map((c) => [c.id, c.latest?.result, c.latest?.trigger])).toEqual([
      [`${site}/changed`, 'mismatch', 'manual'],
      [`${site}/listing`, 'pass', 'manual'],
      [`${site}/price`, 'pass', 'manual'],
    ]);
    expect(parsed[0]?.definition.proxy).toBe(`http://crawler:***@127.0.0.1:${proxy.port}`);

    expect(await canary(['remove', `${site}/changed`])).toMatchObject({ code: 0, stdout: `removed ${site}/changed\n` });
    expectRefused(await canary(['remove', `${site}/changed`]), [
      `id: no canary "${site}/changed"; see \`target-health canary list\` for the ids`,
    ]);
    const passing = await canary(['run', site, '--json']);
    expect(passing.code).toBe(0);
    expect((JSON.parse(passing.stdout) as Array<{ result: string }>).map((r) => r.result)).toEqual(['pass', 'pass']);
  });

  test(
    'a ?token= in a page URL: ' + 'stored with the definition, masked in list and run output and in the run rows',
    async () => {
      const tokenSite = `tok-${randomUUID().slice(0, 8)}.example.com`;
      await upsertSite(pool, tokenSite);
      const secret = `t0k-${randomUUID()}`;
      const added = await canary([
        'add',
        tokenSite,
        '--url',
        `${server.origin}/p/known?lang=en&token=${secret}`,
        '--expect-text',
        '.price',
        '--equals',
        KNOWN_PRICE,
      ]);
      expect(added).toMatchObject({ code: 0, stdout: `created ${tokenSite}/p-known (every 15m, direct, 1 check)\n` });
      expect((await listCanaries(pool, tokenSite))[0]?.definition.url).toBe(
        `${server.origin}/p/known?lang=en&token=${secret}`,
      );

      const ran = await canary(['run', tokenSite, '--json']);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject([
        { canaryId: `${tokenSite}/p-known`, result: 'pass', url: `${server.origin}/p/known?lang=en&token=***` },
      ]);
      // The page itself was requested with the real token.
      expect(server.requests.some((r) => r.target === `/p/known?lang=en&token=${secret}`)).toBe(true);
      const listed = await canary(['list', tokenSite, '--json']);
      const [entry] = JSON.parse(listed.stdout) as Array<{ definition: { url: string }; latest: { url: string } }>;
      expect(entry).toMatchObject({
        definition: { url: `${server.origin}/p/known?lang=en&token=***` },
        latest: { url: `${server.origin}/p/known?lang=en&token=***` },
      });
      const text = await canary(['list', tokenSite]);
      const runs = JSON.stringify((await pool.query('SELECT * FROM canary_runs WHERE site = $1', [tokenSite])).rows);
      expect(runs).toContain('"result":"pass"');
      for (const shown of [
        added.stdout,
        added.stderr,
        ran.stdout,
        ran.stderr,
        listed.stdout,
        listed.stderr,
        text.stdout,
        text.stderr,
        runs,
      ])
        expect(shown).not.toContain(secret);
    },
  );

  test('run: an unknown site or a site without canaries is a one-line error', async () => {
    const other = `empty-${randomUUID().slice(0, 8)}.example.com`;
    expectRefused(await canary(['run', other]), [
      `site: ${other} is not a registered site; register it with \`target-health start ${other}\``,
    ]);
    await upsertSite(pool, other);
    expectRefused(await canary(['run', other]), [
      `site: ${other} has no canaries; add one with \`target-health canary add ${other} --url … --expect-text ` +
        `… --equals …\``,
    ]);
  });
});
