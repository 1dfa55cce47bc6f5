/**
 * The shared redaction (core/common/redact.ts) over tricky URLs: passwords holding `:`, `/`, `@`, `"`, `\`,
 * `#`, `?` and %-escapes, secret query parameters, URLs inside free text and inside pino's JSON lines.
 * docs/security.md cites these tests by name.
 */
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { createLogger } from '../../../server/logging/logger';
import { redactLogLine, redactText, redactUrl, scrubSecrets, urlOrigin } from '../../../core/common/redact';
import { redactProxyUrl } from '../../../core/canaries/proxy-url';
import { runs } from '../../kit/sizes';

const RUNS = runs(10_000);

describe('redactUrl masks the password whatever it holds (WHATWG URL parser)', () => {
  test.each([
    ['a %-escaped colon', 'postgres://app:s3cr%3At@db:5432/x', 'postgres://app:***@db:5432/x'],
    ['a raw colon', 'postgres://app:pa:ss@db:5432/x', 'postgres://app:***@db:5432/x'],
    ['a raw @', 'postgres://app:p@ss@db:5432/x', 'postgres://app:***@db:5432/x'],
    ['two raw @', 'postgres://app:p@s@s@db/x', 'postgres://app:***@db/x'],
    ['a %-escaped slash', 'postgres://app:p%2Fss@db/x', 'postgres://app:***@db/x'],
    ['a raw slash (the parser refuses the URL)', 'postgres://app:pa/ss@db/x', 'postgres://app:***@db/x'],
    ['a raw #', 'postgres://app:pa#ss@db/x', 'postgres://app:***@db/x'],
    ['a raw ?', 'postgres://app:pa?ss@db/x', 'postgres://app:***@db/x'],
    ['a double quote', 'postgres://app:pa"ss@db/x', 'postgres://app:***@db/x'],
    ['a backslash', 'postgres://app:pa\\ss@db/x', 'postgres://app:***@db/x'],
    ['a space', 'postgres://app:pa ss@db/x', 'postgres://app:***@db/x'],
    ['non-ASCII', 'postgres://app:päss€@db/x', 'postgres://app:***@db/x'],
    ['an IPv6 host', 'postgres://app:p:w@[::1]:5432/x', 'postgres://app:***@[::1]:5432/x'],
    ['a proxy URL', 'http://crawler:pa%40ss@gw.example:8000', 'http://crawler:***@gw.example:8000/'],
  ])('%s', (_case, raw, shown) => {
    expect(redactUrl(raw)).toBe(shown);
  });

  test('secret query parameters are masked, the others kept', () => {
    expect(redactUrl('postgres://db/x?sslmode=require&password=hunter2&sslpassword=k3y')).toBe(
      'postgres://db/x?sslmode=require&password=***&sslpassword=***',
    );
    expect(redactUrl('https://hooks.example.com/in?token=abc123&channel=ops')).toBe(
      'https://hooks.example.com/in?token=***&channel=ops',
    );
    expect(redactUrl('https://s3.example/o?X-Amz-Signature=deadbeef&api_key=k&apiKey=k2')).toBe(
      'https://s3.example/o?X-Amz-Signature=***&api_key=***&apiKey=***',
    );
  });

  test('a URL without secrets is unchanged; user names stay', () => {
    expect(redactUrl('postgres://postgres@127.0.0.1:54329/target_health')).toBe(
      'postgres://postgres@127.0.0.1:54329/target_health',
    );
    expect(redactUrl('http://127.0.0.1:8233')).toBe('http://127.0.0.1:8233/');
  });
});

describe('redactText masks credentials of URLs inside free text', () => {
  test.each([
    [
      'an error message',
      'cannot connect to postgres://app:s3:cr/t@db:5432/x (ECONNREFUSED)',
      'cannot connect to postgres://app:***@db:5432/x (ECONNREFUSED)',
    ],
    ['a quoted URL', 'got "postgres://u:p@ss@db/x")', 'got "postgres://u:***@db/x")'],
    ['two URLs', 'from http://a:1x@h1:80/ to https://b:2y@h2/', 'from http://a:***@h1:80/ to https://b:***@h2/'],
    ['a scheme-relative URL', 'nonsense //user:secret@host', 'nonsense //user:***@host'],
    ['a password cut by a space', 'postgres://app:pa ss@db/x', 'postgres://app:*** ss@db/x'],
    [
      'a query token',
      'POST https://hooks.example.com/x?token=abc#frag failed',
      'POST https://hooks.example.com/x?token=***#frag failed',
    ],
    [
      'a bare path with a token (a request log)',
      '/v1/sites?access_token=th_abc&limit=5',
      '/v1/sites?access_token=***&limit=5',
    ],
    [
      'a bare path, secrets after others',
      'GET /v1/x?limit=5&api_key=k1&sig=s2&key=k3 failed',
      'GET /v1/x?limit=5&api_key=***&sig=***&key=*** failed',
    ],
    ['a bare path with a password', 'GET /login?user=bob&password=hunter2#top', 'GET /login?user=bob&password=***#top'],
  ])('%s', (_case, text, shown) => {
    expect(redactText(text)).toBe(shown);
  });

  test.each([
    'http://host:8080/path/@user',
    'https://medium.com/@someone',
    'http://[::1]:8080/a@b',
    'no URL here: user:pass@host',
    'postgres://postgres@127.0.0.1:54329/target_health',
    '/v1/sites?cursor=abc&limit=5&band=critical',
  ])('leaves %s alone', (text) => {
    expect(redactText(text)).toBe(text);
  });

  test('canary proxy listings go through it (redactProxyUrl)', () => {
    expect(redactProxyUrl('http://crawler:pa/ss@gw.example:8000')).toBe('http://crawler:***@gw.example:8000');
    expect(redactProxyUrl('http://crawler:p@ss:w@gw.example:8000')).toBe('http://crawler:***@gw.example:8000');
  });
});

test('urlOrigin keeps a webhook URL to its origin (the secret is in the path)', () => {
  expect(urlOrigin('https://hooks.slack.com/services/T000/B000/XXXXSECRET')).toBe('https://hooks.slack.com');
  expect(urlOrigin('https://u:p@hooks.example.com:8443/x?token=t')).toBe('https://hooks.example.com:8443');
  expect(urlOrigin('not a url')).toBe('an invalid URL');
});

test('scrubSecrets removes known secrets, also %-encoded', () => {
  const hook = 'https://hooks.slack.com/services/T0/B0/s3cr3t path';
  expect(scrubSecrets(`could not POST ${hook} or ${encodeURI(hook)}`, [hook])).toBe('could not POST *** or ***');
});

/** Passwords from characters that break naive redaction; a prefix keeps them apart from the rest of the URL. */
const password = fc
  .array(fc.constantFrom(...':/@%?#"\\\'&=+;,[]!$^|~`{}*'.split(''), 'a', 'Z', '9', 'é', '😀'), {
    minLength: 1,
    maxLength: 24,
  })
  .map((chars) => `Qx${chars.join('')}`);
const scheme = fc.constantFrom('postgres', 'postgresql', 'http', 'https');

function urlWith(s: string, pw: string, encoded: boolean): string {
  return `${s}://crawler:${encoded ? encodeURIComponent(pw) : pw}@db.internal.example:5432/target_health`;
}

test('property: no password survives redactUrl, whether %-encoded or raw', () => {
  fc.assert(
    fc.property(scheme, password, fc.boolean(), (s, pw, encoded) => {
      const shown = redactUrl(urlWith(s, pw, encoded));
      expect(shown).not.toContain(pw);
      expect(shown).not.toContain(encodeURIComponent(pw));
      expect(shown).toContain('crawler:***@');
    }),
    { numRuns: RUNS },
  );
});

test('property: redactText agrees with the URL parser on where the user info ends', () => {
  fc.assert(
    fc.property(
      scheme,
      password,
      fc.boolean(),
      fc.constantFrom('', ' (ECONNREFUSED)', '", next'),
      (s, pw, encoded, after) => {
        const raw = urlWith(s, pw, encoded);
        const shown = redactText(`connect ${raw}${after}`);
        expect(shown).not.toContain(pw);
        expect(shown).not.toContain(encodeURIComponent(pw));
        let parsed: URL | undefined;
        try {
          parsed = new URL(raw);
        } catch {
          parsed = undefined;
        }
        // Where the parser accepts the URL, the masked one still points at the same host and database.
        if (parsed !== undefined && !after.startsWith('"')) {
          const masked = new URL(shown.slice('connect '.length, shown.length - after.length));
          expect(masked.host).toBe(parsed.host);
          expect(masked.pathname).toBe(parsed.pathname);
          expect(masked.username).toBe(parsed.username);
        }
      },
    ),
    { numRuns: RUNS },
  );
});

test('property: a pino JSON line holding the URL anywhere comes out valid JSON without the password', () => {
  fc.assert(
    fc.property(scheme, password, fc.boolean(), (s, pw, encoded) => {
      const raw = urlWith(s, pw, encoded);
      const entry = { level: 50, msg: `connect ${raw} failed`, database: raw, nested: [{ url: raw }] };
      const line = `${JSON.stringify(entry)}\n`;
      const out = redactLogLine(line);
      expect(out.endsWith('\n')).toBe(true);
      const parsed = JSON.parse(out) as { msg: string; database: string };
      expect(out).not.toContain(pw);
      expect(out).not.toContain(JSON.stringify(pw).slice(1, -1));
      expect(out).not.toContain(encodeURIComponent(pw));
      expect(parsed.database).toContain('crawler:***@');
    }),
    { numRuns: RUNS },
  );
});

/** The product logger, writing into a list. */
function keptLogger(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('info', 'redact-test', sink) };
}

test('the product logger masks a URL password that reaches a log call', () => {
  const { lines, logger } = keptLogger();
  const secret = 'Qx:p@ss/w%rd"';
  const url = `postgres://app:${encodeURIComponent(secret)}@db.example:5432/x`;
  logger.error({ err: new Error(`cannot reach ${url}`), database: url }, `lost ${url}`);
  logger.info({ plain: 'nothing to hide' }, 'ordinary line');
  expect(lines).toHaveLength(2);
  const all = lines.join('');
  expect(all).not.toContain(encodeURIComponent(secret));
  expect(all).not.toContain('p@ss');
  expect(all).toContain('postgres://app:***@db.example:5432/x');
  expect(JSON.parse(lines[1]!)).toMatchObject({ plain: 'nothing to hide', msg: 'ordinary line' });
});

test('the product logger masks secret query values of a bare path (a request log line)', () => {
  const { lines, logger } = keptLogger();
  logger.info({ req: { method: 'GET', url: '/v1/sites?access_token=th_SECRETsecret&limit=5' } }, 'request completed');
  logger.info('GET /v1/whoami?token=th_SECRETsecret');
  expect(lines).toHaveLength(2);
  expect(lines.join('')).not.toContain('th_SECRETsecret');
  expect(JSON.parse(lines[0]!)).toMatchObject({ req: { url: '/v1/sites?access_token=***&limit=5' } });
  expect(JSON.parse(lines[1]!)).toMatchObject({ msg: 'GET /v1/whoami?token=***' });
});
