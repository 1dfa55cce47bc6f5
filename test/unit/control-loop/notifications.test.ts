import { loadConsoleUrl, loadNotifierSettings } from '../../../server/config/env';
import { describeUrl } from '../../../server/notifications/channels';
import { slackBody } from '../../../server/notifications/format';
import type { NotificationPayload } from '../../../server/notifications/types';
import { initialLoopState } from '../../../core/control/loop-state';
import { buildEvidence, canaryLines } from '../../../core/control/notices';
import type { TickAssessment } from '../../../core/control/tick-assessment';

describe('notifier settings', () => {
  test('webhooks are optional; empty means unset', () => {
    expect(loadNotifierSettings({})).toEqual({});
    expect(loadNotifierSettings({ TARGET_HEALTH_WEBHOOK_URL: '', TARGET_HEALTH_SLACK_WEBHOOK_URL: '' })).toEqual({});
    expect(
      loadNotifierSettings({
        TARGET_HEALTH_WEBHOOK_URL: 'https://hooks.example.com/th',
        TARGET_HEALTH_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/secret',
      }),
    ).toEqual({
      webhookUrl: 'https://hooks.example.com/th',
      slackWebhookUrl: 'https://hooks.slack.com/services/T0/B0/secret',
    });
  });

  test('a malformed URL is one line naming the variable, without echoing the secret path', () => {
    expect(() =>
      loadNotifierSettings({ TARGET_HEALTH_SLACK_WEBHOOK_URL: 'ftp://hooks.slack.com/services/T0/B0/secret' }),
    ).toThrow(
      'TARGET_HEALTH_SLACK_WEBHOOK_URL: must be an http(s) URL like https://hooks.example.com/target-health ' +
        '(got "ftp://hooks.slack.com/…")',
    );
    expect(() => loadNotifierSettings({ TARGET_HEALTH_WEBHOOK_URL: 'not a url' })).toThrow(
      /^TARGET_HEALTH_WEBHOOK_URL: must be an http\(s\) URL/,
    );
    expect(describeUrl('https://hooks.slack.com/services/T0/B0/secret')).toBe('https://hooks.slack.com');
  });
});

test('the Slack body: title, text, recent ticks and the link, with mrkdwn escaped', () => {
  const evidence = buildEvidence(
    {
      ...initialLoopState('c'),
      history: [
        {
          tick: 4,
          assessedAt: 't',
          state: 'scored',
          score: 40,
          smoothedScore: 45,
          band: 'resisting',
          scoredBand: 'resisting',
          parserHealth: 100,
          reasons: ['challenge'],
          routeVerdict: 'site-wide',
          actions: [],
        },
        {
          tick: 5,
          assessedAt: 't',
          state: 'scored',
          score: 75,
          smoothedScore: 95,
          band: 'resisting',
          scoredBand: 'resisting',
          parserHealth: 100,
          reasons: ['majority_refusal', 'challenge'],
          routeVerdict: 'site-wide',
          actions: [],
        },
      ],
    },
    null,
  );
  const payload: NotificationPayload = {
    key: 'k',
    kind: 'resisting',
    severity: 'critical',
    site: 'shop.example.com',
    audience: 'owner',
    recipient: 'crawl <team>@example.com',
    title: 'shop.example.com is resisting',
    text: 'challenge 30% & rising',
    link: 'http://ui/namespaces/default/workflows/site-health%3Ashop.example.com',
    consoleLink: 'https://health.example.com/console/sites/shop.example.com',
    reviewLink: 'https://health.example.com/console/sites/shop.example.com/review',
    workflowId: 'site-health:shop.example.com',
    evidence,
  };
  expect(slackBody(payload).text).toBe(
    [
      ':rotating_light: *shop.example.com is resisting* (for crawl &lt;team&gt;@example.com)',
      'challenge 30% &amp; rising',
      // The tick a refusal rule paused says so: 75/95 is no resisting score.
      'Recent ticks (score/smoothed band): 4: 40/45 resisting · 5: 75/95 resisting (paused by the majority-refusal ' +
        'rule)',
      '<https://health.example.com/console/sites/shop.example.com|Open shop.example.com in the console> · ' +
        '<https://health.example.com/console/sites/shop.example.com/review|Review the incident> · ' +
        '<http://ui/namespaces/default/workflows/site-health%3Ashop.example.com|the loop in the Temporal UI>',
    ].join('\n'),
  );
  // A notification queued before the console existed still reads: the Temporal UI link alone.
  const { consoleLink: _c, reviewLink: _r, ...older } = payload;
  expect(slackBody(older).text.split('\n').at(-1)).toBe(
    '<http://ui/namespaces/default/workflows/site-health%3Ashop.example.com|the loop in the Temporal UI>',
  );
});

test("notifications carry the crawler's own canary requests as canary evidence, after the product's canaries", () => {
  const window = {
    currentFrom: '2026-12-01T11:48:00.000Z',
    currentTo: '2026-12-01T11:58:00.000Z',
    baselineFrom: '',
    baselineTo: '',
  };
  const own = {
    window: { runs: 1, failures: 1, mismatches: 0 },
    evidence: [
      {
        canaryId: 'shop.example.com/price',
        name: 'price',
        url: 'https://shop.example.com/p',
        route: 'direct',
        result: 'blocked' as const,
        reason: 'status 403',
        evidence: 'title: denied',
        status: 403,
        ranAt: '2026-12-01T11:50:00.000Z',
        stale: false,
        countsForSite: true,
      },
    ],
    nextDueAt: null,
    excludedBaselineDays: [],
  };
  const tick = (over: Partial<TickAssessment>): TickAssessment =>
    ({ window, canaries: null, ...over }) as TickAssessment;
  const crawlerLine = 'CRAWLER 97 canary requests from the crawler 11:48–11:58Z: 90 ok, 7 refused or failed';
  expect(canaryLines(tick({ crawlerCanaries: { requests: 97, failed: 7 } }))).toEqual([crawlerLine]);
  expect(canaryLines(tick({ canaries: own, crawlerCanaries: { requests: 97, failed: 7 } }))).toEqual([
    'BLOCKED shop.example.com/price (11:50Z, direct): status 403 — title: denied',
    crawlerLine,
  ]);
  // None sent, or a tick assessed before they were counted: only the product's.
  expect(canaryLines(tick({ canaries: own, crawlerCanaries: { requests: 0, failed: 0 } }))).toHaveLength(1);
  expect(canaryLines(tick({}))).toEqual([]);
  expect(canaryLines(null)).toEqual([]);
  const evidence = {
    ...buildEvidence(initialLoopState('c'), null),
    canaries: canaryLines(tick({ crawlerCanaries: { requests: 97, failed: 7 } })),
  };
  const body = slackBody({
    key: 'k',
    kind: 'reminder',
    severity: 'critical',
    site: 'shop.example.com',
    audience: 'owner',
    recipient: 'o@example.com',
    title: 't',
    text: 'x',
    link: 'http://ui/x',
    workflowId: 'w',
    evidence,
  }).text;
  expect(body).toContain(`Canaries:\n• ${crawlerLine}`);
});

test("the console links' base: the public URL's origin, else this machine's API; bad values named", () => {
  expect(loadConsoleUrl({ TH_CONSOLE_PUBLIC_URL: 'https://health.example.com/ignored/path' })).toBe(
    'https://health.example.com',
  );
  expect(loadConsoleUrl({})).toBe('http://127.0.0.1:8787');
  expect(loadConsoleUrl({ TH_API_HOST: '0.0.0.0', TH_API_PORT: '9000' })).toBe('http://127.0.0.1:9000');
  expect(loadConsoleUrl({ TH_API_HOST: '::1', TH_API_PORT: '9000' })).toBe('http://[::1]:9000');
  expect(() => loadConsoleUrl({ TH_CONSOLE_PUBLIC_URL: 'https://ops:secret@health.example.com' })).toThrow(
    /TH_CONSOLE_PUBLIC_URL.*must not carry a user name or password/,
  );
  expect(() => loadConsoleUrl({ TH_CONSOLE_PUBLIC_URL: 'ftp://health.example.com' })).toThrow(
    /TH_CONSOLE_PUBLIC_URL.*http\(s\) URL/,
  );
  expect(() => loadConsoleUrl({ TH_API_PORT: '0' })).toThrow(/TH_API_PORT is 0.*set TH_CONSOLE_PUBLIC_URL/);
});
