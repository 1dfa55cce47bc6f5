/**
 * Secrets in the configuration (docs/security.md, "Secrets"): a refused setting never echoes the
 * secret it holds; URLs that would carry credentials into links or HTTP errors are refused where they
 * are named; the settings file `npm start` writes for the CLI is readable by its owner only and
 * survives any value through sh.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../../core/common/user-error';
import {
  DEFAULT_TEMPORAL_UI_URL,
  loadDatabaseUrl,
  loadNotifierSettings,
  loadTemporalUiUrl,
} from '../../../server/config/env';
import { loadCanarySettings } from '../../../server/canary-runner/settings';
import { writeCliSettings } from '../../../stack/cli-settings';

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  throw new Error('expected a UserError');
}

const PASSWORD = 'Qx:pa/ss@w%rd';

describe('a refused setting never echoes its secret', () => {
  test.each([
    ['a MySQL URL', `mysql://app:${PASSWORD}@db/x`],
    ['a %-encoded password in a wrong scheme', `mysql://app:${encodeURIComponent(PASSWORD)}@db/x`],
    ['a libpq key-value string', `host=db password=${PASSWORD} dbname=x`],
    ['a URL without host', `postgres://app:${encodeURIComponent(PASSWORD)}@/x`],
  ])('DATABASE_URL: %s', (_case, value) => {
    const m = refusal(() => loadDatabaseUrl({ DATABASE_URL: value }));
    expect(m).toMatch(/^DATABASE_URL: must be a PostgreSQL URL/);
    expect(m).not.toContain('pa/ss');
    expect(m).not.toContain(encodeURIComponent(PASSWORD));
    expect(m).not.toContain('w%rd');
  });

  test('webhook URLs: only the origin is echoed (the secret is in the path)', () => {
    const m = refusal(() =>
      loadNotifierSettings({ TARGET_HEALTH_SLACK_WEBHOOK_URL: 'ftp://hooks.slack.com/services/T0/B0/XOXBSECRET' }),
    );
    expect(m).toBe(
      'TARGET_HEALTH_SLACK_WEBHOOK_URL: must be an http(s) URL like https://hooks.example.com/target-health ' +
        '(got "ftp://hooks.slack.com/…")',
    );
  });

  test('webhook URLs with user:password@ are refused, without echoing them', () => {
    const m = refusal(() =>
      loadNotifierSettings({
        TARGET_HEALTH_WEBHOOK_URL: `https://bot:${encodeURIComponent(PASSWORD)}@hooks.example.com/in/T0K3N`,
      }),
    );
    expect(m).toMatch(/^TARGET_HEALTH_WEBHOOK_URL: must not carry user:password@ \(HTTP clients refuse it\)/);
    expect(m).toContain('(got "https://hooks.example.com/…")');
    expect(m).not.toContain('T0K3N');
    expect(m).not.toContain(encodeURIComponent(PASSWORD));
  });

  test('TARGET_HEALTH_ROUTES: a refused proxy URL is shown without its password', () => {
    const routes = JSON.stringify({ 'residential-de': `http://crawler:${PASSWORD}@gw.example/no-port` });
    let message = '';
    try {
      loadCanarySettings({ TARGET_HEALTH_ROUTES: routes });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(
      /^TARGET_HEALTH_ROUTES: label "residential-de": "http:\/\/crawler:\*\*\*@gw\.example\/no-port"/,
    );
    expect(message).not.toContain('pa/ss');
  });
});

describe('the Temporal UI address', () => {
  test('defaults to 127.0.0.1, where the dev server listens, and drops trailing slashes', () => {
    expect(DEFAULT_TEMPORAL_UI_URL).toBe('http://127.0.0.1:8233');
    expect(loadTemporalUiUrl({})).toBe('http://127.0.0.1:8233');
    expect(loadTemporalUiUrl({ TEMPORAL_UI_URL: 'https://temporal.example.com/ui//' })).toBe(
      'https://temporal.example.com/ui',
    );
  });

  test('may not carry credentials: its links go into notifications', () => {
    const m = refusal(() => loadTemporalUiUrl({ TEMPORAL_UI_URL: 'https://ops:S3CRET@temporal.example.com' }));
    expect(m).toMatch(/^TEMPORAL_UI_URL: must not carry a user name or password/);
    expect(m).toContain('(got "https://ops:***@temporal.example.com")');
    expect(refusal(() => loadTemporalUiUrl({ TEMPORAL_UI_URL: 'javascript:alert(1)' }))).toMatch(
      /^TEMPORAL_UI_URL: must be an http\(s\) URL/,
    );
  });
});

describe("npm start's CLI settings file", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'th-cli-env-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('is readable by its owner only, also when an older copy was not', () => {
    const first = writeCliSettings(dir, { TEMPORAL_ADDRESS: '127.0.0.1:7233' });
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    execFileSync('chmod', ['644', first.path]);
    writeCliSettings(dir, { TEMPORAL_ADDRESS: '127.0.0.1:7233' });
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
  });

  test('gives sh back every value exactly, whatever it holds', () => {
    const databaseUrl = 'postgres://app:it\'s$HOME`id`\\"x"@127.0.0.1:54329/target_health';
    const written = writeCliSettings(dir, {
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_UI_URL: 'http://127.0.0.1:8233',
      DATABASE_URL: databaseUrl,
    });
    expect(written.names).toEqual(['TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'DATABASE_URL']);
    const out = execFileSync(
      'sh',
      [
        '-c',
        `set -a; . "$1"; set +a; printf '%s\\n' "$TEMPORAL_ADDRESS" "$TEMPORAL_UI_URL" "$DATABASE_URL"`,
        'sh',
        written.path,
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH } },
    );
    expect(out).toBe(`127.0.0.1:7233\nhttp://127.0.0.1:8233\n${databaseUrl}\n`);
    expect(readFileSync(written.path, 'utf8')).toMatch(/^# Written by `npm start`/);
  });
});
