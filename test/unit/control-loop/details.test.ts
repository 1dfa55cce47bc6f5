/**
 * The run's current details in the Temporal UI lead with the band, why, and — while the site waits for a
 * person — the exact commands that decide; the table of scores and controls follows.
 */
import { decideCommand, detailsMarkdown } from '../../../core/control/details';
import { initialLoopState, type LoopState } from '../../../core/control/loop-state';
import type { TickAssessment } from '../../../core/control/tick-assessment';

const SITE = 'shop.example.com';

function state(overrides: Partial<LoopState>): LoopState {
  return { ...initialLoopState('chain-1'), tick: 42, lastAssessedAt: '2026-12-01T09:55:00.000Z', ...overrides };
}

const resisting = state({
  band: 'resisting',
  scoredBand: 'resisting',
  score: 12,
  smoothedScore: 18,
  parserHealth: 97,
  reasons: ['hard_block', 'challenge'],
  controls: {
    band: 'resisting',
    paused: true,
    canaryOnly: true,
    concurrencyLimit: 1,
    revisitMultiplier: 3.38,
    effectiveCostMultiplier: 4,
    reason: 'paused',
  },
  awaiting: {
    kind: 'resisting',
    since: '2026-12-01T09:55:00.000Z',
    reason: 'paused at tick 42: resisting (score 12, smoothed 18): hard_block, challenge',
    pausedBy: null,
    assessmentKey: 'a-42',
    remindersSent: 2,
    lastNotifiedAt: '2026-12-01T10:55:00.000Z',
  },
});

const lines = (md: string): string[] => md.split('\n');

test('a site waiting for a person: band first, then why, then the commands that decide, then the table', () => {
  const md = detailsMarkdown(SITE, resisting, 60_000);
  const l = lines(md);
  expect(l[0]).toBe(
    '**resisting: score 12, smoothed 18** — **waiting for a person** since 2026-12-01T09:55:00.000Z (paused by ' +
      'the loop, 2 reminders sent) · shop.example.com',
  );
  expect(l.slice(2, 4)).toEqual([
    '- Paused: paused at tick 42: resisting (score 12, smoothed 18): hard_block, challenge',
    '- Reasons: hard_block, challenge',
  ]);
  const resume = l.indexOf('- resume: `target-health decide resume shop.example.com --who <you> --why "<why>"`');
  const stop = l.indexOf('- stop: `target-health decide stop shop.example.com --who <you> --why "<why>"`');
  const table = l.indexOf('| | |');
  expect(resume).toBeGreaterThan(3);
  expect(stop).toBe(resume + 1);
  expect(table).toBeGreaterThan(stop);
  expect(l.slice(table)).toEqual([
    '| | |',
    '|---|---|',
    '| score / smoothed | 12 / 18 |',
    '| parser health | 97 |',
    '| controls | paused, canaries only |',
    '| last decision | — |',
    '| tick | 42 (every 1 min), last at 2026-12-01T09:55:00.000Z |',
  ]);
});

test("the latest tick's canary evidence: the product's canaries and the crawler's own canary requests", () => {
  const tick = (over: Partial<TickAssessment>): TickAssessment =>
    ({
      window: {
        currentFrom: '2026-12-01T09:45:00.000Z',
        currentTo: '2026-12-01T09:55:00.000Z',
        baselineFrom: '',
        baselineTo: '',
      },
      canaries: null,
      ...over,
    }) as TickAssessment;
  const row = (t: TickAssessment): string | undefined =>
    lines(detailsMarkdown(SITE, resisting, 60_000, t)).find((l) => l.startsWith('| canaries |'));
  expect(row(tick({ crawlerCanaries: { requests: 97, failed: 7 } }))).toBe(
    '| canaries | 97 canary requests from the crawler 09:45–09:55Z: 90 ok, 7 refused or failed |',
  );
  const own = {
    window: { runs: 2, failures: 1, mismatches: 0 },
    evidence: [],
    nextDueAt: null,
    excludedBaselineDays: [],
  };
  expect(row(tick({ canaries: own, crawlerCanaries: { requests: 3, failed: 0 } }))).toBe(
    "| canaries | 2 of the product's counted, 1 failed, 0 mismatched; 3 canary requests from the crawler " +
      '09:45–09:55Z: 3 ok, 0 refused or failed |',
  );
  expect(row(tick({ crawlerCanaries: { requests: 0, failed: 0 } }))).toBe(
    '| canaries | none defined, none from the crawler |',
  );
  // Before the first tick there is no evidence row.
  expect(row(null as unknown as TickAssessment)).toBeUndefined();
});

describe('a site a refusal rule paused: the headline names the rule, in the wording every surface shares', () => {
  // Paused at a high score by the rule; while it waits, canary traffic alone no longer fires it.
  const ruled = (reason: string): LoopState => ({
    ...resisting,
    scoredBand: 'healthy',
    score: 98,
    smoothedScore: 97,
    reasons: ['latency'],
    awaiting: { ...resisting.awaiting!, reason },
  });

  test('the rule of the pausing tick, the latest scores; the phrase says who paused it', () => {
    const md = detailsMarkdown(
      SITE,
      ruled(
        'paused at tick 42: resisting: paused by the majority-refusal rule; score 75, smoothed 95; reasons ' +
          'majority_refusal, hard_block',
      ),
      60_000,
    );
    expect(lines(md)[0]).toBe(
      '**resisting: paused by the majority-refusal rule; score 98, smoothed 97** (the score alone says healthy) ' +
        '— **waiting for a person** since 2026-12-01T09:55:00.000Z (2 reminders sent) · shop.example.com',
    );
  });

  test('a pause carried from before the shared wording still names its rule; no reminder, no parentheses', () => {
    const old = ruled(
      'paused at tick 42: resisting (score 65, smoothed 80): total_refusal, majority_refusal, hard_block',
    );
    const state = { ...old, awaiting: { ...old.awaiting!, remindersSent: 0 } };
    expect(lines(detailsMarkdown(SITE, state, 60_000))[0]).toBe(
      '**resisting: paused by the total-refusal rule; score 98, smoothed 97** (the score alone says healthy) ' +
        '— **waiting for a person** since 2026-12-01T09:55:00.000Z · shop.example.com',
    );
  });
});

test('a pause by hand names who paused; the band the score alone gives is shown when it differs', () => {
  const md = detailsMarkdown(
    SITE,
    {
      ...resisting,
      band: 'healthy',
      scoredBand: 'degrading',
      reasons: [],
      awaiting: {
        ...resisting.awaiting!,
        kind: 'manual',
        pausedBy: 'alice@example.com',
        reason: 'legal asked us to hold',
        remindersSent: 0,
      },
    },
    60_000,
  );
  expect(lines(md)[0]).toBe(
    '**healthy: score 12, smoothed 18** (the score alone says degrading) — **waiting for a person** since ' +
      '2026-12-01T09:55:00.000Z (paused by alice@example.com) · shop.example.com',
  );
  expect(md).toContain('- Paused: legal asked us to hold\n- Reasons: none');
  expect(md).toContain('`target-health decide resume shop.example.com --who <you> --why "<why>"`');
});

test('a running site: band and why lead, no decide command', () => {
  const md = detailsMarkdown(
    SITE,
    state({
      band: 'degrading',
      scoredBand: 'degrading',
      score: 61,
      smoothedScore: 66,
      reasons: ['hard_block'],
      heldFor: 'routes a, b pull the score down: confirming a route problem',
    }),
    1_000,
  );
  expect(lines(md).slice(0, 5)).toEqual([
    '**degrading: score 61, smoothed 66** · shop.example.com',
    '',
    '- Reasons: hard_block',
    '- Band held: routes a, b pull the score down: confirming a route problem',
    '',
  ]);
  expect(md).not.toContain('decide');
  expect(md).toContain('| tick | 42 (every 1 s), last at 2026-12-01T09:55:00.000Z |');
});

test('no score and a loop problem are part of why; newlines and pipes cannot break the layout', () => {
  const md = detailsMarkdown(
    SITE,
    state({
      noScore: { state: 'insufficient-data', detail: 'only 3 requests\nin the window' },
      problem: {
        kind: 'assessment_failed',
        since: '2026-12-01T09:00:00.000Z',
        ticks: 3,
        message: 'value out of range | column x',
      },
      lastDecision: {
        decisionKey: 'd1',
        kind: 'resume',
        who: 'bob|ops',
        why: 'ok',
        mode: { mode: 'cautious' },
        via: 'update',
        decidedAt: '2026-12-01T08:00:00.000Z',
        assessmentKey: null,
      },
    }),
    60_000,
  );
  expect(md).toContain('- No score: only 3 requests in the window\n');
  expect(md).toContain(
    '- **Problem: assessment_failed** since 2026-12-01T09:00:00.000Z (3 ticks): value out of range | column x\n',
  );
  expect(md).toContain('| last decision | resume by bob\\|ops at 2026-12-01T08:00:00.000Z |');
});

test('the decide command quotes a site the shell would split', () => {
  expect(decideCommand('shop.example.com:8443', 'stop')).toBe(
    'target-health decide stop shop.example.com:8443 --who <you> --why "<why>"',
  );
  expect(decideCommand("it's here", 'resume')).toBe(
    `target-health decide resume 'it'\\''s here' --who <you> --why "<why>"`,
  );
});
