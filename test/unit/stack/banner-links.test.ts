/**
 * One address for the Temporal UI: what `npm start`'s banner prints (the dev server's UI, built by
 * localTemporalUiUrl) is the base of the CLI's links and the notifications' links; and the banner says
 * where the Temporal CLI is and how to run it through the project.
 */
import {
  loadLocalStackSettings,
  loadTemporalUiUrl,
  localTemporalUiUrl,
  workflowUiLink,
} from '../../../server/config/env';
import { bannerLines } from '../../../stack/banner';
import { CliContext } from '../../../client/context';
import { RUNNING_SITES_QUERY } from '../../../loop/list-queries';

const base = {
  temporalAddress: '127.0.0.1:7233',
  shownDatabaseUrl: 'postgres://postgres:***@127.0.0.1:54329/target_health',
  externalDatabase: false,
  apiUrl: 'http://127.0.0.1:8787',
  cliSettings: { shownPath: 'data/cli.env', names: ['TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'DATABASE_URL'] },
};

describe('the UI address', () => {
  test.each([[{}], [{ TEMPORAL_UI_PORT: '9233' }]])(
    'links without TEMPORAL_UI_URL use the UI npm start serves with the same settings (%j)',
    (env) => {
      const served = localTemporalUiUrl(loadLocalStackSettings(env).temporalUiPort);
      expect(loadTemporalUiUrl(env)).toBe(served);
      expect(served).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(workflowUiLink(loadTemporalUiUrl(env), 'default', 'site-health:shop.example.com')).toBe(
        `${served}/namespaces/default/workflows/site-health%3Ashop.example.com`,
      );
    },
  );

  test('TEMPORAL_UI_URL (what npm start writes into cli.env) wins; a bad port is named', () => {
    expect(loadTemporalUiUrl({ TEMPORAL_UI_URL: 'http://127.0.0.1:9999/', TEMPORAL_UI_PORT: '9233' })).toBe(
      'http://127.0.0.1:9999',
    );
    expect(() => loadTemporalUiUrl({ TEMPORAL_UI_PORT: 'x' })).toThrow(/^TEMPORAL_UI_PORT: must be a port number/);
  });

  test("the CLI's links come from the same place", () => {
    const saved = { url: process.env.TEMPORAL_UI_URL, port: process.env.TEMPORAL_UI_PORT };
    try {
      delete process.env.TEMPORAL_UI_URL;
      process.env.TEMPORAL_UI_PORT = '9233';
      expect(new CliContext().uiUrl()).toBe('http://127.0.0.1:9233');
    } finally {
      for (const [name, value] of [
        ['TEMPORAL_UI_URL', saved.url],
        ['TEMPORAL_UI_PORT', saved.port],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe('the banner', () => {
  test('prints the UI, the Temporal CLI it provisioned and the pass-through form, and how to list the sites', () => {
    const lines = bannerLines({
      ...base,
      uiUrl: 'http://127.0.0.1:8233',
      temporalCli: { kind: 'binary', path: '/root/.cache/target-health/temporal-v1.5.1/temporal', source: 'cache' },
    });
    expect(lines).toContain('  Temporal UI:   http://127.0.0.1:8233');
    expect(lines).toContain(
      '  Temporal CLI:  /root/.cache/target-health/temporal-v1.5.1/temporal (cache); or `npx target-health ' +
        'temporal …`, connected like every command here',
    );
    expect(lines).toContain(
      `  List sites:    set -a; . data/cli.env; set +a; npx target-health temporal workflow list --query ` +
        `"${RUNNING_SITES_QUERY}"`,
    );
    // The tests of npm start wait for these two lines, last.
    expect(lines.slice(-3, -1).map((l) => l.split(':')[0])).toEqual(['  Watch a site', '  First token']);
  });

  test('a cluster from TEMPORAL_ADDRESS needed no provisioning; an SDK download left no binary', () => {
    expect(bannerLines({ ...base, uiUrl: undefined, temporalCli: undefined })).toContain(
      '  Temporal CLI:  npx target-health temporal … (provisioned on first use: temporal on PATH, else the ' +
        'per-machine cache)',
    );
    expect(
      bannerLines({ ...base, uiUrl: undefined, temporalCli: { kind: 'sdk-download', downloadDir: '/tmp/x' } }).join(
        '\n',
      ),
    ).toContain('put temporal on PATH (or TEMPORAL_CLI_PATH)');
  });
});
