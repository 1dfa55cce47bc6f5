import { loadNotifierSettings } from '../../../config/env';
import { describeUrl } from '../../../notifications/channels';
import { slackBody } from '../../../notifications/format';
import type { NotificationPayload } from '../../../notifications/types';
import { initialLoopState } from '../../../control/loop-state';
import { buildEvidence } from '../../../control/notices';

describe('notifier settings', () => {
  test('webhooks are optional; empty means unset', () => {
    expect(loadNotifierSettings({})).toEqual({});
    expect(loadNotifierSettings({ TARGET_HEALTH_WEBHOOK_URL: '', TARGET_HEALTH_SLACK_WEBHOOK_URL: '' })).toEqual({});
    expect(loadNotifierSettings({ TARGET_HEALTH_WEBHOOK_URL: 'https://hooks.example.com/th', TARGET_HEALTH_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/secret' })).toEqual({
      webhookUrl: 'https://hooks.example.com/th',
      slackWebhookUrl: 'https://hooks.slack.com/services/T0/B0/secret',
    });
  });

  test('a malformed URL is one line naming the variable, without echoing the secret path', () => {
    expect(() => loadNotifierSettings({ TARGET_HEALTH_SLACK_WEBHOOK_URL: 'ftp://hooks.slack.com/services/T0/B0/secret' })).toThrow(
      'TARGET_HEALTH_SLACK_WEBHOOK_URL: must be an http(s) URL like https://hooks.example.com/target-health (got "ftp://hooks.slack.com/…")',
    );
    expect(() => loadNotifierSettings({ TARGET_HEALTH_WEBHOOK_URL: 'not a url' })).toThrow(/^TARGET_HEALTH_WEBHOOK_URL: must be an http\(s\) URL/);
    expect(describeUrl('https://hooks.slack.com/services/T0/B0/secret')).toBe('https://hooks.slack.com');
  });
});

test('the Slack body: title, text, recent ticks and the link, with mrkdwn escaped', () => {
  const evidence = buildEvidence({ ...initialLoopState('c'), history: [{ tick: 4, assessedAt: 't', state: 'scored', score: 40, smoothedScore: 45, band: 'resisting', scoredBand: 'resisting', parserHealth: 100, reasons: ['challenge'], routeVerdict: 'site-wide', actions: [] }] }, null);
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
    workflowId: 'site-health:shop.example.com',
    evidence,
  };
  expect(slackBody(payload).text).toBe(
    [
      ':rotating_light: *shop.example.com is resisting* (for crawl &lt;team&gt;@example.com)',
      'challenge 30% &amp; rising',
      'Recent ticks (score/smoothed band): 4: 40/45 resisting',
      '<http://ui/namespaces/default/workflows/site-health%3Ashop.example.com|Open the loop in the Temporal UI>',
    ].join('\n'),
  );
});
