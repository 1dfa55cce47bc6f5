import { cell, renderReview } from '../../../client/review/render';
import { review, span } from './review-fixture';

test('every section, the figures as given, the chart linked by its relative name', () => {
  const md = renderReview(review);
  expect(md.split('\n')[0]).toBe('# Incident review: shop.example.com, 2026-11-24 10:00:00Z → 2026-11-24 11:00:00Z');
  for (const s of [
    '## Summary',
    '## Timeline of band changes',
    '## Lead time',
    '## Actions taken and their effect',
    '## Who decided what and when',
    '## Canaries',
    '## Chart',
    '## What to tune',
  ])
    expect(md).toContain(`\n${s}\n`);
  expect(md).toContain('(not back to healthy by the end of the search)');
  expect(md).toContain(
    '- **Peak refusal rate:** 90.0 % over 5 min at 2026-11-24 10:20:00Z; refusals peaked (first reached 80 % ' +
      'of it) at 2026-11-24 10:10:00Z',
  );
  expect(md).toContain('the warning came **10 min before refusals peaked**');
  // A pipe in a reason does not break the table.
  expect(md).toContain(
    '| 2026-11-24 10:00:00Z | healthy → degrading | control-loop | 70 / 72 | hard_block | score \\| fell |',
  );
  // The rule that paused it is named beside the band, so a score of 75 does not read as a contradiction.
  expect(md).toContain(
    '| 2026-11-24 10:20:00Z | degrading → resisting (paused by the majority-refusal rule) | control-loop | 75 / — | ' +
      'majority_refusal, challenge |',
  );
  expect(md).toContain(
    '| throttle | 6 | control-loop | concurrency 16→3 | 2.0 % of 150 requests → no traffic | 10.0 → 0 | ' +
      'obeyed (requests per minute 10.0 → 0.0) | degrading |',
  );
  expect(md).toContain('| 40.6 → 47.8 | NOT OBEYED: requests per minute 40.6 → 47.8 — the crawler did not slow down');
  expect(md).toContain('- **Refusals over the window:** 70.0 % of 1000 requests (minute rollups, all routes)');
  expect(md).toContain('No person decided during the incident');
  expect(md).toContain(
    '![shop.example.com: score, errors, refusals and actions around the incident]' +
      '(review-shop.example.com-20261124T1000Z.svg)',
  );
  expect(md).toContain(
    '- **faster smoothing** — faster smoothing settings: would have warned 3 min earlier and throttled 4 ticks ' +
      'more; 5 ticks differ',
  );
  expect(md).toContain('**Warned earliest:** faster smoothing.');
  expect(md).toContain('**Throttled less:** none of the candidates.');
  expect(md).toContain('The replay of the current settings first warned when live did');
  // Said once, whatever the source of the settings.
  expect(md).toContain("once with the running loop's settings (site-health:shop.example.com) and once per candidate");
  expect(md).not.toMatch(/\bthe the\b/);
  // Each figure has its own column: no bare "30 (5)".
  expect(md).toContain('| Ticks that differ | Of those, in band, reasons, controls or notices |');
  expect(md).toMatch(/\| 2 \| 30 \| 5 \|\n/);
  // Warnings from the onset, the quiet days' false alarms beside the current settings', the headline's trade-off.
  expect(md).toContain('| current | 2026-11-24 10:00:00Z | 5 min after the onset | — | — | 10 min before | 20 |');
  expect(md).toContain('from the same warm-up before the onset (2026-11-24 09:55:00Z)');
  expect(md).toContain(
    '**Quiet days:** 2026-11-23 (quiet live), 2026-11-22 (quiet in the replay) — whole UTC days before the ' +
      'incident',
  );
  expect(md).toContain('| faster smoothing | 2 | 0 | 30 | +2 | 0 |');
  expect(md).toContain('; on the quiet days 2 false degrades and 0 pauses more than the current settings.');
  expect(md).toContain('**Headline:** faster smoothing warned 3 min earlier (2 min after the onset instead of 5 min');
});

test('no comparison: the unsettled candidate says why instead of "earlier", and no verdict line is printed', () => {
  const c = review.tuning.candidates[0]!;
  const why =
    'no comparison: the store has no traffic before 2026-11-24 09:55:00Z to settle the smoothing (the current ' +
    "settings' replay's scores start there, at the onset; settling takes 1 h (6 half-lives of 10 min))";
  const md = renderReview({
    ...review,
    tuning: {
      ...review.tuning,
      candidates: [{ ...c, noComparison: why }],
      warnedEarliest: null,
      headline: { kind: 'no-comparison', candidate: null, text: `${why}.` },
    },
  });
  expect(md).toContain(`- **faster smoothing** — faster smoothing settings: ${why}.`);
  expect(md).not.toContain('would have warned');
  expect(md).not.toContain('**Warned');
  expect(md).toContain(`**Headline:** no comparison: the store has no traffic before 2026-11-24 09:55:00Z`);
});

test('quiet days skipped: said, no false alarms counted', () => {
  const md = renderReview({
    ...review,
    tuning: {
      ...review.tuning,
      candidates: review.tuning.candidates.map((c) => ({ ...c, quiet: null })),
      quietDays: { ...review.tuning.quietDays, days: [], current: null, shortfall: 'skipped with --quiet-days 0' },
    },
  });
  expect(md).toContain('**Quiet days:** none replayed (skipped with --quiet-days 0), so no false alarms were counted.');
});

test('one tick differing, one run, one request: singular', () => {
  const c = review.tuning.candidates[0]!;
  const md = renderReview({
    ...review,
    refusals: { ...review.refusals, during: span(1, 1) },
    canaries: { ...review.canaries, product: { pass: 1, mismatch: 0, blocked: 0, error: 0 } },
    tuning: { ...review.tuning, candidates: [{ ...c, importantDifferences: 1, throttledLess: 1 }] },
  });
  expect(md).toContain('throttled 1 tick fewer; 1 tick differs in band, reasons, controls or notices; on the quiet');
  expect(md).toContain("The product's canaries ran 1 time: 1 pass");
  expect(md).toContain('100.0 % of 1 request (minute rollups');
});

test("the canaries during the incident: the product's runs by result and the crawler's own canary requests", () => {
  expect(renderReview(review)).toContain(
    "\n## Canaries\n\nNo canary of the product's ran during the incident.\nThe crawler sent no canary requests " +
      '(`canary: true`) during the incident.\n',
  );
  const md = renderReview({
    ...review,
    canaries: { product: { pass: 3, mismatch: 0, blocked: 2, error: 1 }, crawler: { requests: 97, failed: 7 } },
  });
  expect(md).toContain(
    "The product's canaries ran 6 times: 3 pass, 0 mismatch, 2 blocked, 1 error.\nDuring the incident, 97 " +
      'canary requests from the crawler: 90 ok, 7 refused or failed.\n',
  );
});

test('no chart, no lead: said in words', () => {
  const md = renderReview({ ...review, lead: null, chart: { file: null, note: 'Chart not drawn (--no-chart).' } });
  expect(md).toContain('\n## Chart\n\nChart not drawn (--no-chart).\n');
  expect(md).toContain('- **Lead time to the peak:** — (no warning band change or no refusal peak in the window)');
});

test('cell: pipes and backslashes escaped, one line, never empty', () => {
  expect(cell('a|b\\c\nd')).toBe('a\\|b\\\\c d');
  expect(cell('  ')).toBe('—');
});

test('a late pause reads late, from the onset and from refusals passing half', () => {
  const md = renderReview(review);
  expect(md).toContain(
    '- **From the onset:** onset at 2026-11-24 10:00:00Z (refusals left normal); paused 22 min after the onset, ' +
      '21 min after refusals passed half — **late**',
  );
  expect(md).toContain(
    '| First pause | 2026-11-24 10:22:00Z | 22 min after the onset | 21 min after refusals passed half |',
  );
  expect(md).toContain(
    '| First degrade (warning) | 2026-11-24 10:00:00Z | at the onset | 1 min before refusals passed half |',
  );
  expect(md).toContain(
    '| First tick naming challenge | 2026-11-24 10:01:00Z | 1 min after the onset | as refusals passed half |',
  );
  expect(md).toContain('The loop **paused 22 min after the onset, 21 min after refusals passed half** — **late**');
  // On time: a pause within 5 minutes of refusals passing half is not called late.
  const onTime = renderReview({
    ...review,
    early: {
      ...review.early,
      firstPause: { at: '2026-11-24T10:04:00.000Z', afterOnsetMs: 4 * 60_000, afterHalfMs: 3 * 60_000 },
      pauseLate: false,
    },
  });
  expect(onTime).toContain('paused 4 min after the onset, 3 min after refusals passed half\n');
  expect(onTime).not.toContain('**late**');
});

test('no onset: said in words, the milestones still listed', () => {
  const md = renderReview({ ...review, early: { ...review.early, onset: null, firstPause: null, pauseLate: false } });
  expect(md).toContain('- **From the onset:** — (the traffic never left its normal near the first warning)');
  expect(md).toContain('there is no onset to measure from');
  expect(md).toContain('| First pause | never | — | — |');
});

test('a route alert is listed beside the band reasons, in the summary and under the timeline', () => {
  const md = renderReview(review);
  expect(md).toContain("- **Alerts beside the band's reasons:** route alert: route problem — pool=dc-3");
  expect(md).toContain('| 2026-11-24 10:05:00Z | 5 min after the onset | route alert: route problem — pool=dc-3 |');
  const none = renderReview({ ...review, alerts: [] });
  expect(none).toContain("- **Alerts beside the band's reasons:** none (no route or parser alert)");
  expect(none).toContain("No route or parser alert during the incident: the band's reasons are the whole explanation.");
});

test('a replayed review says so in its summary and does not compare its replay with itself', () => {
  const stored = renderReview(review);
  const replayed = renderReview({
    ...review,
    source: {
      kind: 'replayed',
      why: 'no live ticks in the period',
      settingsFrom: 'the product defaults (no settings recorded for shop.example.com; no loop of this site runs)',
      tickMs: 60_000,
      from: '2026-11-24T03:00:00.000Z',
      to: '2026-11-24T16:00:00.000Z',
      decisions: 0,
      settingsChangedDuring: [],
      command: 'target-health replay shop.example.com --from 2026-11-24T03:00:00.000Z --to 2026-11-24T16:00:00.000Z',
    },
  });
  expect(stored).toContain('- **Ticks stored:** ');
  expect(stored).not.toContain('- **Ticks:** replayed');
  expect(stored).toMatch(/when live did|Live first warned/);
  expect(replayed).toContain(
    '- **Ticks:** replayed (no live ticks in the period): the loop as it would have run with ',
  );
  expect(replayed).toContain('- **Ticks replayed:** ');
  expect(replayed).not.toContain('- **Ticks stored:** ');
  expect(replayed).not.toMatch(/when live did|Live first warned/);
});
