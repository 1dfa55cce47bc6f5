import { createHash } from 'node:crypto';
import { buildFleet } from '../../../server/fleet/fleet';
import { CONTENT_SECURITY_POLICY, signInPage, STYLE_HASH } from '../../../client/console/layout';
import { fleetPage } from '../../../client/console/pages/fleet';
import type { SiteSummary } from '../../../server/api/schemas/sites';

import { row } from './fleet-rows';

const now = new Date('2026-12-04T12:00:00Z');

const view = (rows: SiteSummary[], form = { band: '', awaiting: false, site: '' }) =>
  fleetPage({
    fleet: buildFleet(rows, { bands: null, awaiting: false, site: [] }, now),
    form,
    who: 'alice@example.com',
    csrfToken: 'csrf-token-value',
    now,
  });

test('the fleet page lists the sites most urgent first, every value escaped', () => {
  const page = view([
    row('a.example.com'),
    row('b.example.com', {
      band: 'resisting',
      score: 12,
      smoothedScore: 18,
      awaitingHuman: true,
      awaitingSince: '2026-12-04T09:00:00Z',
      lastChange: {
        at: '2026-12-04T09:00:00Z',
        actor: 'control-loop',
        change: 'paused',
        reason: '<img src=x onerror=alert(1)> "quoted"',
        version: 3,
      },
    }),
  ]);
  expect(page.indexOf('b.example.com')).toBeLessThan(page.indexOf('a.example.com'));
  expect(page).not.toContain('<img');
  expect(page).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;quoted&quot;');
  expect(page).toContain('12 / 18');
  expect(page).toContain('3h 00m ago');
  expect(page).toContain('<input type="hidden" name="csrf" value="csrf-token-value">');
  expect(page).toContain('Signed in as alice@example.com');
});

test('the filter form keeps what was typed, escaped, and labels every control', () => {
  const page = view([], { band: 'degrading', awaiting: true, site: '"><script>' });
  expect(page).toContain('value="&quot;&gt;&lt;script&gt;"');
  expect(page).toContain('<option value="degrading" selected>degrading</option>');
  expect(page).toMatch(/id="awaiting" name="awaiting" type="checkbox" value="true" checked/);
  for (const id of ['band', 'site', 'awaiting']) {
    expect(page).toContain(`id="${id}"`);
    expect(page).toContain(`<label for="${id}">`);
  }
  expect(page).toContain('No site matches.');
});

test('the sign-in page posts the token in the form body and shows an error escaped', () => {
  const page = signInPage({ error: 'The token "<x>" lacks read' });
  expect(page).toContain('<form class="sign-in" method="post" action="/console/sign-in">');
  expect(page).toContain('<label for="token">API token</label>');
  expect(page).toContain('The token &quot;&lt;x&gt;&quot; lacks read');
});

test("the Content-Security-Policy allows the stylesheet and the console's own script file, nothing inline", () => {
  const style = /<style>([\s\S]*?)<\/style>/.exec(signInPage())![1]!;
  expect(STYLE_HASH).toBe(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
  expect(CONTENT_SECURITY_POLICY.split('; ')).toEqual([
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    "script-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ]);
  expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
});
