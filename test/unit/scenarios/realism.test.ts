/**
 * Each scenario's events and truth, checked against what they claim:
 * - every event passes the event schema and leaves the outcome to the classifier;
 * - the classifier (with size and records norms learnt from the scenario's own history, as the store
 *   learns them) finds the outcome each event was generated to have, ≥ 95 % of the time per outcome
 *   (≥ 99 % for normal pages);
 * - `hardBlocks50At` / `refused50At` are where the generated traffic passes half, counted here again;
 * - the cause shows after the onset and not before, as the description says, and the expectations match
 *   the traffic (a scenario that should pause does refuse more than half of the requests).
 */
import { compileClassifier, type Norms } from '@target-health/crawler/events/classify';
import { parseEvent, type Outcome, type RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { fastParseEvent } from '@target-health/crawler/events/fast-parse';
import { generateLabelledScenario, SCENARIO_NAMES, type ScenarioTruth } from '../../../core/scenarios';

const END = Date.UTC(2026, 10, 30, 12, 0);
const DAYS = 2;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface Seen {
  e: RequestOutcomeEvent;
  intended: Outcome;
}

interface Loaded {
  truth: ScenarioTruth;
  seen: Seen[];
  problems: string[];
}

/** Generates and parses a scenario once; `problems` lists events that broke the contract. */
function load(name: string): Loaded {
  const { truth, events } = generateLabelledScenario(name, { days: DAYS, seed: 3, end: END });
  const seen: Seen[] = [];
  const problems: string[] = [];
  let last = -Infinity;
  for (const { event, intended } of events) {
    // The fast path returns exactly what parseEvent would, or nothing (test/unit/signals/fast-parse.test.ts).
    let e = fastParseEvent(event);
    if (!e) {
      const slow = parseEvent(event);
      if (!slow.ok) {
        problems.push(`${event.eventId}: ${slow.errors.join('; ')}`);
        continue;
      }
      e = slow.event;
    }
    if (e.outcome !== undefined) problems.push(`${e.eventId}: explicit outcome`);
    if (e.site !== truth.site) problems.push(`${e.eventId}: site ${e.site}`);
    if (e.ts < last || e.ts < END - DAYS * 24 * HOUR || e.ts >= END)
      problems.push(`${e.eventId}: time ${e.ts} out of order or span`);
    if (e.eventId !== `${name}-3-${seen.length}`) problems.push(`${e.eventId}: unexpected id`);
    if ((e.bodySample?.length ?? 0) > 2048)
      problems.push(`${e.eventId}: body sample of ${e.bodySample!.length} characters`);
    last = e.ts;
    seen.push({ e, intended });
    if (problems.length > 5) break;
  }
  return { truth, seen, problems };
}

/** Size and records norms per page type from the history, as the store builds them (ok 2xx responses only). */
function historyNorms(
  seen: readonly Seen[],
  incidentStart: number,
  classify: ReturnType<typeof compileClassifier>,
): Map<string, Norms> {
  const sizes = new Map<string, number[]>();
  const records = new Map<string, { with: number; all: number }>();
  for (const { e } of seen) {
    if (e.ts >= incidentStart) break;
    if (
      e.pageType === undefined ||
      e.status === undefined ||
      e.status < 200 ||
      e.status >= 300 ||
      classify(e).outcome !== 'ok'
    )
      continue;
    if (e.bytes !== undefined) sizes.set(e.pageType, [...(sizes.get(e.pageType) ?? []), e.bytes]);
    if (e.extraction) {
      const r = records.get(e.pageType) ?? { with: 0, all: 0 };
      r.all++;
      if ((e.extraction.validRecords ?? (e.extraction.result === 'ok' ? 1 : 0)) > 0) r.with++;
      records.set(e.pageType, r);
    }
  }
  const norms = new Map<string, Norms>();
  for (const [pageType, list] of sizes) {
    list.sort((a, b) => a - b);
    const r = records.get(pageType);
    norms.set(pageType, {
      sizeNorm: { medianBytes: list[Math.floor(list.length / 2)]!, samples: list.length },
      ...(r ? { recordsNorm: { usualRecordsRate: r.with / r.all, samples: r.all } } : {}),
    });
  }
  return norms;
}

const REFUSED = new Set<Outcome>(['hard_block', 'challenge', 'soft_block']);

/** Outcome shares (as generated) of the events in [from, to) that pass `only`. */
function shares(
  seen: readonly Seen[],
  from: number,
  to: number,
  only: (e: RequestOutcomeEvent) => boolean = () => true,
) {
  let n = 0;
  const count: Record<Outcome, number> = { ok: 0, hard_block: 0, challenge: 0, soft_block: 0, error: 0 };
  const okLatency: number[] = [];
  let products = 0;
  let productsMissing = 0;
  for (const { e, intended } of seen) {
    if (e.ts < from || e.ts >= to || !only(e)) continue;
    n++;
    count[intended]++;
    if (intended === 'ok') okLatency.push(e.latencyMs);
    if (intended === 'ok' && e.pageType === 'product') {
      products++;
      if (e.extraction?.result === 'missing_fields') productsMissing++;
    }
  }
  okLatency.sort((a, b) => a - b);
  const of = (k: number) => (n === 0 ? NaN : k / n);
  return {
    n,
    hard: of(count.hard_block),
    challenge: of(count.challenge),
    soft: of(count.soft_block),
    refused: of(count.hard_block + count.challenge + count.soft_block),
    error: of(count.error),
    medianOkLatency: okLatency[Math.floor(okLatency.length / 2)] ?? NaN,
    productsMissing: products === 0 ? NaN : productsMissing / products,
  };
}

/** The first minute whose trailing five minutes are more than half refused that way (≥ 20 requests), counted afresh. */
function firstMajority(
  seen: readonly Seen[],
  start: number,
  end: number,
  refused: (o: Outcome) => boolean,
): string | null {
  const minutes = (end - start) / MINUTE;
  const total = new Array<number>(minutes).fill(0);
  const hits = new Array<number>(minutes).fill(0);
  for (const { e, intended } of seen) {
    const m = Math.floor((e.ts - start) / MINUTE);
    total[m]!++;
    if (refused(intended)) hits[m]!++;
  }
  for (let m = 0; m < minutes; m++) {
    let n = 0;
    let h = 0;
    for (let k = Math.max(0, m - 4); k <= m; k++) {
      n += total[k]!;
      h += hits[k]!;
    }
    if (n >= 20 && h / n > 0.5) return new Date(start + m * MINUTE).toISOString();
  }
  return null;
}

/** What each scenario's description promises about its traffic, checked around the onset. */
const CAUSE_CHECKS: Record<string, (seen: readonly Seen[], onset: number, t: ScenarioTruth) => void> = {
  quiet: (seen, _o, t) => expect(shares(seen, Date.parse(t.history.from), END).refused).toBeLessThan(0.02),
  'low-traffic': (seen, _o, t) => expect(shares(seen, Date.parse(t.incident.from), END).n).toBeLessThan(1440),
  'always-challenging': (seen, _o, t) => {
    for (const [from, to] of [
      [t.history.from, t.history.to],
      [t.incident.from, t.incident.to],
    ] as const) {
      const s = shares(seen, Date.parse(from), Date.parse(to));
      expect(s.challenge).toBeGreaterThan(0.07);
      expect(s.challenge).toBeLessThan(0.1);
    }
  },
  diurnal: (seen, _o, t) => {
    const day = Date.parse(t.incident.from) - (Date.parse(t.incident.from) % (24 * HOUR));
    // 00:00–06:00 UTC against 12:00–18:00 UTC of the same days.
    const night = shares(seen, day + 24 * HOUR, day + 30 * HOUR);
    const afternoon = shares(seen, day + 12 * HOUR, day + 18 * HOUR);
    expect(afternoon.n).toBeGreaterThan(5 * night.n);
    expect(night.challenge).toBeGreaterThan(3 * afternoon.challenge);
    expect(afternoon.medianOkLatency).toBeGreaterThan(1.3 * night.medianOkLatency);
  },
  'gradual-hostility': (seen, onset, t) => {
    expect(shares(seen, onset - HOUR, onset).refused).toBeLessThan(0.03);
    const first = shares(seen, onset, onset + HOUR).hard;
    const later = shares(seen, onset + 3 * HOUR, onset + 4 * HOUR).hard;
    expect(first).toBeLessThan(0.15);
    expect(later).toBeGreaterThan(first + 0.3);
    expect(shares(seen, onset + 6 * HOUR, onset + 7 * HOUR).hard).toBeGreaterThan(0.85);
    // Gradual: half is passed hours after the onset, so degrading an hour before it is possible.
    expect(Date.parse(t.hardBlocks50At!) - onset).toBeGreaterThan(2 * HOUR);
  },
  'sudden-wall': (seen, onset, t) => {
    expect(shares(seen, onset - HOUR, onset).refused).toBeLessThan(0.03);
    expect(shares(seen, onset, onset + 5 * MINUTE).hard).toBeGreaterThan(0.93);
    expect(Date.parse(t.hardBlocks50At!) - onset).toBeLessThan(5 * MINUTE);
  },
  'challenge-wave': (seen, onset) => {
    const wave = shares(seen, onset + 15 * MINUTE, onset + 4 * HOUR);
    expect(wave.challenge).toBeGreaterThan(0.5);
    expect(wave.soft).toBeGreaterThan(0.2);
    expect(wave.refused).toBeGreaterThan(0.75);
    expect(shares(seen, onset + 6 * HOUR, END).refused).toBeLessThan(0.03);
  },
  'soft-blocks': (seen, onset) => {
    expect(shares(seen, onset - HOUR, onset).soft).toBeLessThan(0.01);
    expect(shares(seen, onset + 30 * MINUTE, END).soft).toBeGreaterThan(0.6);
  },
  tarpit: (seen, onset) => {
    const before = shares(seen, onset - HOUR, onset);
    const slow = shares(seen, onset + 80 * MINUTE, onset + 90 * MINUTE);
    expect(slow.medianOkLatency).toBeGreaterThan(4 * before.medianOkLatency);
    expect(slow.hard).toBeLessThan(0.03);
    expect(shares(seen, onset + 3 * HOUR, END).hard).toBeGreaterThan(0.7);
  },
  'dead-pool': (seen, onset) => {
    expect(shares(seen, onset, END, (e) => e.route.pool === 'dc-3').refused).toBeGreaterThan(0.8);
    expect(shares(seen, onset, END, (e) => e.route.pool !== 'dc-3').refused).toBeLessThan(0.02);
    expect(shares(seen, onset - HOUR, onset, (e) => e.route.pool === 'dc-3').refused).toBeLessThan(0.05);
  },
  'dead-country': (seen, onset) => {
    expect(shares(seen, onset, END, (e) => e.route.country === 'BR').refused).toBeGreaterThan(0.9);
    expect(shares(seen, onset, END, (e) => e.route.country !== 'BR').refused).toBeLessThan(0.02);
    expect(shares(seen, onset - HOUR, onset, (e) => e.route.country === 'BR').refused).toBeLessThan(0.05);
  },
  redesign: (seen, onset) => {
    expect(shares(seen, onset - HOUR, onset).productsMissing).toBeLessThan(0.02);
    const after = shares(seen, onset, END);
    expect(after.productsMissing).toBeGreaterThan(0.97);
    expect(after.refused).toBeLessThan(0.02);
  },
  'load-latency': (seen, onset) => {
    const before = shares(seen, onset - HOUR, onset);
    const loaded = shares(seen, onset + 45 * MINUTE, onset + 150 * MINUTE);
    expect(loaded.medianOkLatency).toBeGreaterThan(2.5 * before.medianOkLatency);
    expect(loaded.error).toBeGreaterThan(before.error + 0.02);
    expect(loaded.refused).toBeLessThan(0.02);
  },
  'bad-minute': (seen, onset) => {
    expect(onset % MINUTE).toBe(0);
    expect(shares(seen, onset, onset + MINUTE).refused).toBeGreaterThan(0.8);
    expect(shares(seen, onset + MINUTE, onset + 30 * MINUTE).refused).toBeLessThan(0.03);
    expect(shares(seen, onset - 30 * MINUTE, onset).refused).toBeLessThan(0.03);
  },
  'slow-creep': (seen, onset, t) => {
    expect(onset).toBeLessThan(Date.parse(t.incident.from));
    const early = shares(seen, onset, onset + 6 * HOUR).hard;
    const middle = shares(seen, Date.parse(t.incident.from), Date.parse(t.incident.from) + 6 * HOUR).hard;
    const last = shares(seen, END - HOUR, END).hard;
    expect(early).toBeLessThan(0.06);
    expect(middle).toBeGreaterThan(early + 0.1);
    expect(last).toBeGreaterThan(0.5);
    expect(last).toBeLessThan(0.7);
  },
};

test('every scenario has its cause checked', () => {
  expect(Object.keys(CAUSE_CHECKS).sort()).toEqual([...SCENARIO_NAMES].sort());
});

describe.each(SCENARIO_NAMES)('%s', (name) => {
  let data: Loaded | undefined;
  const loaded = (): Loaded => (data ??= load(name));
  // Hundreds of MB across the scenarios if kept: free each one when its tests are done.
  afterAll(() => {
    data = undefined;
  });

  test(
    'every event passes the event schema, without an explicit outcome, in time order, ids stable, body samples ≤ ' +
      '2 KB',
    () => {
      const { seen, problems } = loaded();
      expect(problems).toEqual([]);
      expect(seen.length).toBeGreaterThan(name === 'low-traffic' ? 1_000 : 50_000);
    },
  );

  test(
    'the classifier finds the intended outcome ≥ 95 % of the time for each outcome, ≥ 99 % for ok (norms from ' +
      'the own history)',
    () => {
      const { seen, truth } = loaded();
      const classify = compileClassifier({});
      const norms = historyNorms(seen, Date.parse(truth.incident.from), classify);
      expect([...norms.keys()].sort()).toEqual(['listing', 'product', 'search']);
      const confusion: Partial<Record<Outcome, Partial<Record<Outcome, number>>>> = {};
      for (const { e, intended } of seen) {
        const got = classify(e, norms.get(e.pageType!)).outcome;
        const row = (confusion[intended] ??= {});
        row[got] = (row[got] ?? 0) + 1;
      }
      const agreement: Record<string, number> = {};
      for (const [intended, row] of Object.entries(confusion)) {
        const total = Object.values(row).reduce((a, b) => a + b, 0);
        if (total >= 20) agreement[intended] = (row[intended as Outcome] ?? 0) / total;
      }
      // Normal pages are most of the traffic: even 1 % of them taken for refusals would swamp the signal.
      for (const [intended, share] of Object.entries(agreement)) {
        if (share < (intended === 'ok' ? 0.99 : 0.95))
          throw new Error(
            `${intended}: ${(share * 100).toFixed(1)} % agreement; confusion ${JSON.stringify(confusion)}`,
          );
      }
      expect(Object.keys(agreement)).toEqual(expect.arrayContaining(['ok', 'error']));
    },
  );

  test('hardBlocks50At and refused50At are where the generated traffic passes half', () => {
    const { seen, truth } = loaded();
    const start = Date.parse(truth.history.from);
    expect(truth.hardBlocks50At).toBe(firstMajority(seen, start, END, (o) => o === 'hard_block'));
    expect(truth.refused50At).toBe(firstMajority(seen, start, END, (o) => REFUSED.has(o)));
    if (truth.refused50At !== null)
      expect(Date.parse(truth.refused50At)).toBeGreaterThanOrEqual(Date.parse(truth.onset!) - 5 * MINUTE);
  });

  test('the cause shows after the onset and not before; the expectations match the traffic', () => {
    const { seen, truth } = loaded();
    const onset = truth.onset === null ? NaN : Date.parse(truth.onset);
    expect(truth.cause === 'none').toBe(truth.onset === null);
    if (truth.onset !== null && name !== 'slow-creep') {
      expect(onset).toBeGreaterThanOrEqual(Date.parse(truth.incident.from));
      expect(onset).toBeLessThan(END);
    }
    CAUSE_CHECKS[name]!(seen, onset, truth);
    // A site refusing more than half of the traffic must be paused; otherwise it must not be.
    expect(truth.expect.pause).toBe(truth.refused50At !== null);
    if (truth.expect.pause) expect(truth.expect.degrade).toBe(true);
    if (truth.cause === 'none')
      expect(truth.expect).toEqual({ pause: false, degrade: false, routeAlert: null, parserAlert: false });
    expect(truth.expect.parserAlert).toBe(truth.cause === 'parser');
    expect(truth.expect.routeAlert !== null).toBe(truth.cause === 'route');
  });
});
