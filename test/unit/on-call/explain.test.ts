import {
  explainTick,
  formatSignals,
  formatTickContext,
  percent,
  scoreSentence,
  signalLines,
  tickExplanationSchema,
} from '../../../client/on-call/explain';
import { explainSchema, formatExplained } from '../../../client/on-call/explain-at';
import { readStoredTick } from '../../../client/on-call/stored-tick';
import { type AssessInput, assess } from '../../../core/scoring/assess';
import type { WindowInput } from '../../../core/scoring/window';
import { joinRegExp } from '../../kit/regexp';

const WINDOW = {
  currentFrom: '2026-12-01T11:48:00.000Z',
  currentTo: '2026-12-01T11:58:00.000Z',
  baselineFrom: '2026-11-16T00:00:00.000Z',
  baselineTo: '2026-11-30T00:00:00.000Z',
};
const BASELINE: WindowInput = {
  requests: 20_000,
  hardBlocks: 200,
  challenges: 0,
  softBlocks: 0,
  p95LatencyMs: 400,
  extractionOk: 19_800,
};

/** What else a tick's assessment is given: the previous tick's carry, the tick's time. */
type AssessExtra = Omit<AssessInput, 'current' | 'baseline'>;

/** A tick as the activity stores it (JSON round trip: what comes back from jsonb). */
function stored(current: WindowInput, baseline: WindowInput | null = BASELINE, extra: AssessExtra = {}): unknown {
  return JSON.parse(
    JSON.stringify({
      site: { registered: true, owner: null, parserOwner: null },
      window: WINDOW,
      assessment: assess({ ...extra, current, baseline }),
      canaries: null,
    }),
  );
}

function explained(current: WindowInput, baseline: WindowInput | null = BASELINE, extra: AssessExtra = {}) {
  const read = readStoredTick(stored(current, baseline, extra));
  if (!read.ok) throw new Error(read.problem);
  return explainTick(read.tick);
}

describe('explainTick', () => {
  test(
    'each signal now vs normal with intervals, what it cost and whether it is a reason; the penalties add up to ' +
      'the score',
    () => {
      const e = explained({
        requests: 200,
        hardBlocks: 60,
        challenges: 0,
        softBlocks: 0,
        p95LatencyMs: 800,
        extractionOk: 140,
      });
      expect(tickExplanationSchema.parse(e)).toEqual(e);
      expect(e.state).toBe('scored');
      const hard = e.signals.find((s) => s.signal === 'hard_block')!;
      expect(hard).toMatchObject({
        score: 'health',
        unit: 'rate',
        now: 0.3,
        normal: 0.01,
        count: 60,
        outOf: 200,
        reason: true,
      });
      expect(hard.interval!.now.low).toBeLessThan(0.3);
      expect(hard.interval!.now.high).toBeGreaterThan(0.3);
      expect(hard.interval!.normal.high - hard.interval!.normal.low).toBeLessThan(
        hard.interval!.now.high - hard.interval!.now.low,
      );
      expect(hard.penalty).toBe(hard.weight); // 29 points above normal: past the 20-point cap
      const latency = e.signals.find((s) => s.signal === 'latency')!;
      expect(latency).toMatchObject({ unit: 'p95-ms', now: 800, normal: 400, interval: null, excess: 1, reason: true });
      expect(e.signals.find((s) => s.signal === 'challenge')).toMatchObject({ penalty: 0, reason: false });
      const health = e.signals.filter((s) => s.score === 'health');
      expect(health.map((s) => s.signal)).toEqual(['hard_block', 'challenge', 'soft_block', 'latency']);
      expect(100 - health.reduce((sum, s) => sum + s.penalty, 0)).toBeCloseTo(e.unrounded!, 9);
      expect(e.score).toBe(Math.round(e.unrounded!));
      expect(e.reasons).toEqual(['hard_block', 'latency']);
      expect(e.signals.filter((s) => s.score === 'parser').map((s) => s.signal)).toEqual([
        'extraction_missing_fields',
        'extraction_schema_mismatch',
        'extraction_empty',
      ]);
      expect(scoreSentence(e)).toMatch(
        new RegExp(`^${e.score} = 100 − \\d+\\.\\d points \\(hard_block \\d+\\.\\d, latency \\d+\\.\\d\\)$`),
      );
    },
  );

  test('learning: no normal, so no signals, and the reason why', () => {
    const e = explained({ requests: 200, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 300 }, null);
    expect(e).toMatchObject({
      state: 'learning',
      score: null,
      unrounded: null,
      signals: [],
      noScore: 'learning the baseline: no baseline yet (new site)',
    });
    expect(scoreSentence(e)).toBe('— (learning the baseline: no baseline yet (new site))');
    expect(formatSignals(e.signals)).toEqual(['  — (no normal to compare with yet)']);
  });

  test('too little current traffic: signals shown, no score, the volume it needs', () => {
    const e = explained({ requests: 10, hardBlocks: 1, challenges: 0, softBlocks: 0, p95LatencyMs: 300 });
    expect(e.state).toBe('insufficient-data');
    expect(e.noScore).toBe('too little current traffic to judge: 10 requests in the current window, needs 50');
    expect(e.signals.length).toBeGreaterThan(0);
  });

  test('an assessment stored before a rule existed explains without it; a malformed one says where', () => {
    const old = stored({ requests: 200, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 300 }) as {
      assessment: Record<string, unknown>;
    };
    delete old.assessment.majorityRefusal;
    delete old.assessment.routeHold;
    delete (old.assessment.routes as Record<string, unknown>).watching;
    const read = readStoredTick(old);
    expect(read.ok).toBe(true);
    if (read.ok) expect(explainTick(read.tick).rules.majorityRefusal).toBeNull();
    const broken = stored({ requests: 200, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 300 }) as {
      assessment: { health: Record<string, unknown> };
    };
    broken.assessment.health.score = 'high';
    expect(readStoredTick(broken)).toEqual({
      ok: false,
      problem: expect.stringMatching(/^assessment\.health\.score: /),
    });
  });

  test("total refusal that fired on the recent window shows the recent window's share, not the current one's", () => {
    // 67.5% of the current window refused, 95% of its last minutes: the rule (90%) fired on the recent one.
    const current: WindowInput = {
      requests: 200,
      hardBlocks: 135,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 400,
      recent: { requests: 60, hardBlocks: 57, challenges: 0, softBlocks: 0, routes: [] },
    };
    const read = readStoredTick(
      JSON.parse(
        JSON.stringify({
          site: { registered: true, owner: null, parserOwner: null },
          window: WINDOW,
          assessment: assess({ current, baseline: BASELINE, previousRefusal: 18 }),
          canaries: null,
        }),
      ),
    );
    if (!read.ok) throw new Error(read.problem);
    const e = explainTick(read.tick);
    expect(e.rules.totalRefusal).toMatchObject({ fired: true, refusingWindow: 'recent', streak: 19 });
    const rules = formatTickContext(e).find(([label]) => label === 'rules')![1];
    expect(rules).toMatch(
      /^total refusal FIRED \(refused 95\.0% in the recent window, 67\.5% over the current one, streak 19\); /,
    );
    // An assessment stored before the windows were told apart reads as before.
    const old = JSON.parse(JSON.stringify(read.tick)) as { assessment: { totalRefusal: Record<string, unknown> } };
    delete old.assessment.totalRefusal.recentRefusedShare;
    delete old.assessment.totalRefusal.refusingWindow;
    const oldRead = readStoredTick(old);
    if (!oldRead.ok) throw new Error(oldRead.problem);
    expect(formatTickContext(explainTick(oldRead.tick)).find(([label]) => label === 'rules')![1]).toMatch(
      /^total refusal FIRED \(refused 67\.5%, streak 19\); /,
    );
  });

  test('percentages', () => {
    expect([percent(0), percent(0.3), percent(0.0123), percent(0.0004), percent(1)]).toEqual([
      '0%',
      '30.0%',
      '1.23%',
      '0.04%',
      '100.0%',
    ]);
  });
});

describe('explain text and JSON', () => {
  test('the tick, score, band and controls then, the signal table and the rule', () => {
    const e = explained({
      requests: 200,
      hardBlocks: 60,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 800,
      extractionOk: 140,
    });
    const x = explainSchema.parse({
      source: { kind: 'stored' },
      site: 'shop.example.com',
      at: '2026-12-01T12:00:00.000Z',
      tick: { tick: 42, assessedAt: '2026-12-01T11:58:00.000Z', assessmentKey: 'shop.example.com/c/42', chainId: 'c' },
      band: 'degrading',
      controls: {
        concurrencyLimit: 9,
        revisitMultiplier: 2.25,
        paused: false,
        canaryOnly: false,
        effectiveCostMultiplier: 1.5,
        band: 'degrading',
        reason: 'degrading',
        version: 3,
      },
      controlsChange: {
        at: '2026-12-01T11:58:00.000Z',
        actor: 'control-loop',
        reason: 'degrading (score 61): hard_block',
        tick: { tick: 42, assessmentKey: 'shop.example.com/c/42' },
      },
      bandCause: { kind: 'score' },
      scoring: { smoothedScore: 66, scoredBand: 'degrading' },
      explanation: e,
    });
    const lines = formatExplained(x).split('\n');
    // The tick's own smoothed score and scored band, stored with it; a tick stored before they were says so.
    expect(lines).toContain(
      'smoothed   66, scored band degrading (what the smoothed score and the refusal rules say alone)',
    );
    expect(formatExplained({ ...x, scoring: null }).split('\n')).toContain(
      'smoothed   — (not stored with this tick: it was stored before the release that stores it)',
    );
    expect(formatExplained({ ...x, scoring: { smoothedScore: null, scoredBand: 'healthy' } }).split('\n')).toContain(
      'smoothed   — (no score yet), scored band healthy (what the smoothed score and the refusal rules say alone)',
    );
    expect(lines[0]).toBe(
      'shop.example.com at tick 42 (2026-12-01 11:58:00Z), the latest tick at or before 2026-12-01 12:00:00Z',
    );
    expect(lines).toContain('band       degrading');
    expect(lines).toContain('controls   running, concurrency 9, revisit ×2.25, cost ×1.5');
    // This tick made the change: its reason is this tick's own.
    expect(lines).toContain('           set by this tick: degrading (score 61): hard_block');
    expect(lines).toContain('reasons    hard_block, latency');
    expect(lines.find((l) => l.startsWith('  hard_block'))).toMatch(
      joinRegExp(
        /^ {2}hard_block\s+30\.0% \(\d+\.\d%–\d+\.\d%\) 60\/200\s+1\.00% /,
        /\(0\.\d+%–1\.\d+%\)\s+\+29\.0% vs normal, −35\.0 of 35 {2}← reason$/,
      ),
    );
    expect(lines.find((l) => l.startsWith('  latency'))).toMatch(
      /^ {2}latency\s+p95 800 ms\s+p95 400 ms\s+×2\.00 vs normal, −\d+\.\d of \d+ {2}← reason$/,
    );
    expect(lines.find((l) => l.startsWith('rules'))).toBe(
      'rules      total refusal no (refused 30.0%, streak 0); majority refusal no (refused 30.0%, normal ' +
        '1.00%, streak 0)',
    );
    expect(lines.at(-2)).toBe(
      'A rate costs weight × (now − normal) / 20.0%, latency weight × (p95 / normal − 1) / 2, each between 0 ' +
        'and its weight; the score is 100 minus their sum, rounded.',
    );
  });

  test(
    "controls set by an earlier tick: that tick's words are not shown as this one's; the band names the rule " +
      'that set it',
    () => {
      // This tick had 358 requests; the change was made at tick 40, a tick with 42.
      const e = explained({ requests: 358, hardBlocks: 4, challenges: 0, softBlocks: 0, p95LatencyMs: 400 });
      const x = explainSchema.parse({
        source: { kind: 'stored' },
        site: 'shop.example.com',
        at: '2026-12-01T12:00:00.000Z',
        tick: {
          tick: 44,
          assessedAt: '2026-12-01T11:58:00.000Z',
          assessmentKey: 'shop.example.com/c/44',
          chainId: 'c',
        },
        band: 'resisting',
        controls: {
          concurrencyLimit: 4,
          revisitMultiplier: 3,
          paused: true,
          canaryOnly: true,
          effectiveCostMultiplier: 1,
          band: 'resisting',
          reason: 'old',
        },
        controlsChange: {
          at: '2026-12-01T11:40:00.000Z',
          actor: 'control-loop',
          reason: 'healthy (score —, smoothed 90); band held, too little current traffic (42 requests, needs 50)',
          tick: { tick: 40, assessmentKey: 'shop.example.com/c/40' },
        },
        bandCause: { kind: 'rule', rule: 'majority_refusal' },
        scoring: null,
        explanation: e,
      });
      const text = formatExplained(x);
      expect(text).not.toContain('42 requests');
      expect(text).toContain('current window 2026-12-01 11:48:00Z to 2026-12-01 11:58:00Z: 358 requests (needs 50)');
      expect(text.split('\n')).toContain(
        '           set at tick 40 (2026-12-01 11:40:00Z) by control-loop, unchanged since',
      );
      expect(text.split('\n')).toContain('band       resisting (paused by the majority-refusal rule)');
      // A person's reason is theirs, whichever tick is explained.
      const decided = formatExplained({
        ...x,
        controlsChange: {
          at: '2026-12-01T11:50:00.000Z',
          actor: 'human:alice',
          reason: 'resumed by alice',
          tick: null,
        },
        bandCause: { kind: 'person' },
      });
      expect(decided).toContain('           set 2026-12-01 11:50:00Z by human:alice: resumed by alice\n');
      expect(decided).toContain('band       resisting\n');
    },
  );

  test('a window without traffic says so instead of rows of 0% of 0', () => {
    const e = explained({ requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 0 });
    expect(e.state).toBe('insufficient-data');
    expect(signalLines(e)).toEqual(['  — (no traffic in the window)']);
    const rules = formatTickContext(e).find(([label]) => label === 'rules')![1];
    expect(rules).toBe(
      'total refusal no (no traffic in the window, streak 0); majority refusal no (no traffic in the window, streak 0)',
    );
    expect(e.noScore).toBe('too little current traffic to judge: 0 requests in the current window, needs 50');
    // One request is one request.
    expect(explained({ requests: 1, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 10 }).noScore).toBe(
      'too little current traffic to judge: 1 request in the current window, needs 50',
    );
    // With traffic, the table as before.
    const busy = explained({ requests: 200, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 400 });
    expect(signalLines(busy)).toEqual(formatSignals(busy.signals));
  });
});

describe('routes: each pool said once', () => {
  const POOL = (pool: string, requests: number, hardBlocks: number) => ({
    pool,
    requests,
    hardBlocks,
    challenges: 0,
    softBlocks: 0,
  });
  test('a confirmed pool is listed once with one comparison, not again in the summary with other figures', () => {
    const current: WindowInput = {
      requests: 1000,
      hardBlocks: 194,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 400,
      routes: [POOL('dc', 200, 190), POOL('res-a', 400, 2), POOL('res-b', 400, 2)],
    };
    const confirmed = { dimension: 'pool' as const, value: 'dc', streak: 3, quiet: 0, confirmed: true };
    const e = explained(current, BASELINE, {
      previous: { routeWatch: [{ ...confirmed, since: '2026-12-01T11:40:00.000Z' }] },
      at: Date.parse('2026-12-01T11:58:00.000Z'),
    });
    expect(e.routes.verdict).toBe('route-specific');
    // The stored summary names the pool with rounded figures; the explanation's own list has it already.
    expect(e.routes.summary).toMatch(/^route problem: pool dc \(95% failing vs 1%\)/);
    const routes = formatTickContext(e).find(([label]) => label === 'routes')![1];
    expect(routes).toBe('route-specific: set aside: pool dc (95.0% failing vs 0.50% on the other routes)');
    expect(routes.match(/pool dc/g)).toHaveLength(1);
  });

  test('without set-aside or watched routes, the summary is the line', () => {
    const e = explained({ requests: 200, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 400 });
    const routes = formatTickContext(e).find(([label]) => label === 'routes')![1];
    expect(routes).toBe(`${e.routes.verdict}: ${e.routes.summary}`);
  });
});
