/**
 * The demo's narrator: what it prints when a site's controls change and when every outcome is in.
 * Pure (its output is a function it is given), so the lines are checked exactly where it matters.
 */
import { Narrator } from '../../../dev/demo/narrator';
import type { SiteControls } from '@target-health/crawler/controls/types';
import type { SiteHealthState } from '../../../loop/messages';

const HOSTS = { shop: 'shop.test', news: 'news.test', travel: 'travel.test', calm: 'calm.test' };

function controls(site: string, over: Partial<SiteControls> = {}): SiteControls {
  return {
    site,
    concurrencyLimit: 4,
    revisitMultiplier: 1,
    paused: false,
    canaryOnly: false,
    effectiveCostMultiplier: 1,
    band: 'healthy',
    reason: 'healthy',
    version: 1,
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

function narrator(): { n: Narrator; lines: string[] } {
  const lines: string[] = [];
  const n = new Narrator({
    say: (l) => lines.push(l),
    clock: () => '[01:00]',
    uiUrl: 'http://ui.test',
    consoleUrl: 'http://127.0.0.1:8787/console',
    namespace: 'default',
    cliSettingsPath: 'data/demo/cli.env',
    hosts: HOSTS,
    nominal: 4,
    siteAdmin: 'http://127.0.0.1:1',
  });
  return { n, lines };
}

describe('demo narrator', () => {
  it('names the first step down from the usual concurrency THROTTLED, and only that one', () => {
    const { n, lines } = narrator();
    n.controlsChanged(controls(HOSTS.shop));
    n.controlsChanged(
      controls(HOSTS.shop, {
        concurrencyLimit: 3,
        revisitMultiplier: 1.5,
        band: 'degrading',
        reason: 'degrading (score 62)',
        version: 2,
      }),
    );
    n.controlsChanged(
      controls(HOSTS.shop, {
        concurrencyLimit: 2,
        revisitMultiplier: 2.25,
        band: 'degrading',
        reason: 'degrading (score 61)',
        version: 3,
      }),
    );
    expect(lines).toEqual([
      '[01:00] shop.test: THROTTLED, concurrency 4→3, revisit ×1→×1.5, band healthy→degrading — degrading (score 62)',
      '[01:00] shop.test: concurrency 3→2, revisit ×1.5→×2.25 — degrading (score 61)',
    ]);
  });

  it('a pause is PAUSED, not THROTTLED', () => {
    const { n, lines } = narrator();
    n.controlsChanged(controls(HOSTS.news));
    n.controlsChanged(
      controls(HOSTS.news, {
        concurrencyLimit: 0,
        paused: true,
        canaryOnly: true,
        band: 'resisting',
        reason: 'resisting',
        version: 2,
      }),
    );
    expect(lines).toEqual([
      '[01:00] news.test: concurrency 4→0, PAUSED (canaries only), band healthy→resisting — resisting',
    ]);
  });

  it(
    'sums up once the shop is throttled, news waits for a person, ' + 'travel has a route alert and calm is healthy',
    () => {
      const { n, lines } = narrator();
      const state = (over: Partial<SiteHealthState>) =>
        ({
          alerts: { route: false },
          awaitingHuman: null,
          band: 'healthy',
          controls: null,
          routeDiagnosis: null,
          lastDecision: null,
          ...over,
        }) as unknown as SiteHealthState;
      n.controlsChanged(controls(HOSTS.shop));
      n.stateSeen(
        HOSTS.news,
        state({ awaitingHuman: { since: 'x' } as unknown as SiteHealthState['awaitingHuman'], band: 'resisting' }),
      );
      n.stateSeen(HOSTS.travel, state({ alerts: { route: true } as SiteHealthState['alerts'] }));
      n.stateSeen(HOSTS.calm, state({}));
      expect(lines.join('\n')).not.toContain('All four outcomes are in');
      n.controlsChanged(
        controls(HOSTS.shop, { concurrencyLimit: 3, band: 'degrading', reason: 'degrading', version: 2 }),
      );
      expect(lines.filter((l) => l.includes('All four outcomes are in'))).toHaveLength(1);
      // The person is pointed at the paused site's page in the console, and at the console's fleet at the end.
      expect(lines.join('\n')).toContain(
        'news.test: waiting for a person (band resisting). The crawler sends it canaries only. See what it ' +
          'served and decide in the console:\n      http://127.0.0.1:8787/console/sites/news.test  (then Decide)\n' +
          '   signed in with a token from: set -a; . data/demo/cli.env; set +a; npx target-health token create ' +
          'you --scope read,decide\n',
      );
      expect(lines.join('\n')).toContain(
        'All four outcomes are in — see them in the console: http://127.0.0.1:8787/console/fleet',
      );
      expect(lines.join('\n')).toContain(
        'shop.test: throttled    news.test: paused, waiting for a person    travel.test: route alert, not ' +
          'throttled    calm.test: healthy',
      );
    },
  );
});
