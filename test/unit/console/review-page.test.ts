import { load } from 'cheerio';
import { bandLabel } from '../../../core/control/band-wording';
import { renderReview } from '../../../client/review/render';
import { reviewPage, reviewProblemPage } from '../../../client/console/pages/review';
import type { Review } from '../../../client/review/schema';
import { review } from '../review/review-fixture';

const now = new Date('2026-11-24T12:00:00Z');
const HOSTILE = '<img src=x onerror=alert(1)>';
const NO_CHART = { svg: null, note: 'The chart could not be drawn.' };
const view = (r: Review, chart: { svg: string | null; note: string } = NO_CHART, quietDays = 0, tuned = true) =>
  reviewPage({
    review: r,
    tuning: tuned ? r.tuning : null,
    chart,
    asked: '2026-11-24T10:30:00Z',
    quietDays,
    who: 'alice@example.com',
    csrfToken: 'csrf-token-value',
    now,
  });

test('every section of the Markdown review, with the same figures, times in <time datetime>', () => {
  const html = view(review);
  const $ = load(html);
  const md = renderReview(review);
  const headings = $('section h2')
    .map((_i, e) => $(e).text())
    .get();
  // The page's sections are the Markdown's, in the same order.
  const mdHeadings = md
    .split('\n')
    .filter((l) => l.startsWith('## '))
    .map((l) => l.slice(3));
  expect(headings).toEqual(mdHeadings);
  expect($('h2.title').text()).toBe('Incident review: shop.example.com, 2026-11-24 10:00:00Z → 2026-11-24 11:00:00Z');
  // The lead time as the Markdown says it.
  expect(md).toContain('10 min before refusals peaked');
  expect($('#summary').parent().text()).toContain('10 min before refusals peaked');
  expect($('time[datetime="2026-11-24T10:00:00.000Z"]').first().text()).toBe('2026-11-24 10:00:00Z');
  expect(html).toContain('(2h 00m ago)');
  // One timeline row per band change, the refusal rule named as the Markdown names it.
  const rows = $('#timeline')
    .parent()
    .find('tbody tr')
    .map((_i, e) => $(e).text())
    .get();
  expect(rows.slice(0, 2)).toHaveLength(2);
  const label = `degrading → ${bandLabel('resisting', review.timeline[1]!.cause)}`;
  expect(rows[1]).toContain(label);
  expect(md).toContain(label);
  // The equivalent command, with the quiet days the page used, and the way to ask for them.
  expect(html).toContain(
    '<code>target-health review shop.example.com --incident 2026-11-24T10:30:00.000Z --quiet-days 0</code>',
  );
  // The fixture replayed quiet days: their table is shown, and no link to ask for them.
  expect($('#tune').parent().find('caption').text()).toContain('False alarms over the quiet days');
  expect(html).toContain(review.tuning.headline.text.replace(/'/g, '&#39;'));
  // Every page of a session carries its CSRF token in the sign-out form.
  expect(html).toContain('<input type="hidden" name="csrf" value="csrf-token-value">');
  // Links back to the fleet and to the site's page.
  expect(
    $('nav.crumbs a')
      .map((_i, e) => $(e).attr('href'))
      .get(),
  ).toEqual(['/console/fleet', '/console/sites/shop.example.com']);
});

test('without quiet days replayed, the page says so and links to ask for them', () => {
  const r: Review = {
    ...review,
    tuning: {
      ...review.tuning,
      quietDays: { ...review.tuning.quietDays, wanted: 0, days: [], current: null, shortfall: 'none asked for' },
    },
  };
  const $ = load(view(r));
  const link = $('a:contains("replay 3 quiet days")');
  expect(link.attr('href')).toBe(
    '/console/sites/shop.example.com/review?incident=2026-11-24T10%3A30%3A00.000Z&tune=1&quiet-days=3',
  );
  expect($('#tune').parent().text()).toContain('this page replays none unless asked');
});

test('what to tune is replayed only when asked: without it, the page says why and links to it', () => {
  const $ = load(view(review, NO_CHART, 0, false));
  const section = $('#tune').parent();
  expect(section.text()).toContain('Not replayed yet');
  expect(section.find('table')).toHaveLength(0);
  expect(section.find('a').attr('href')).toBe(
    '/console/sites/shop.example.com/review?incident=2026-11-24T10%3A30%3A00.000Z&tune=1',
  );
});

test('every value from the store is escaped: a hostile reason, actor, decision, alert and site name', () => {
  const r: Review = {
    ...review,
    site: `x${HOSTILE}.example.com`,
    timeline: review.timeline.map((b) => ({ ...b, reason: HOSTILE, reasons: [HOSTILE], actor: HOSTILE })),
    actions: review.actions.map((a) => ({ ...a, reason: HOSTILE, change: HOSTILE })),
    decisions: [
      { at: '2026-11-24T10:40:00.000Z', who: HOSTILE, kind: 'resume', why: HOSTILE, mode: HOSTILE, waitedMs: 1 },
    ],
    alerts: [{ at: '2026-11-24T10:05:00.000Z', kind: 'route_alert', text: HOSTILE }],
    tuning: { ...review.tuning, headline: { ...review.tuning.headline, text: HOSTILE } },
  };
  const html = view(r);
  expect(html).not.toContain('<img');
  expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  // The site in a link is percent-encoded, in the text escaped.
  expect(html).toContain('href="/console/sites/x%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E.example.com"');
});

test('the chart is inline SVG with what it covers; without one, the note says why', () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10"/></svg>';
  const $ = load(view(review, { svg, note: '15 min either side of the window' }));
  expect($('figure.chart svg rect')).toHaveLength(1);
  expect($('figure.chart figcaption').text()).toBe('15 min either side of the window');
  const without = load(view(review));
  expect(without('figure.chart')).toHaveLength(0);
  expect(without('#chart').parent().text()).toContain('The chart could not be drawn.');
});

test('a problem page names the problem, escaped, with the way back', () => {
  const html = reviewProblemPage({
    site: 'shop.example.com',
    problem: `incident: "${HOSTILE}" is not a time`,
    who: 'alice@example.com',
    csrfToken: 'c',
  });
  const $ = load(html);
  expect($('[role=alert]').text()).toBe(`incident: "${HOSTILE}" is not a time`);
  expect(html).not.toContain('<img');
  expect($('nav.crumbs a').first().attr('href')).toBe('/console/fleet');
});
