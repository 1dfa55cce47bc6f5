import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  COST_SIGNALS,
  EXTRACTION_SIGNALS,
  HEALTH_SIGNALS,
  NO_SCORE,
  REASONS,
  REASON_KEYS,
  ROUTE_REASONS,
  assess,
  isReasonKey,
} from '../../../core/scoring';
import { REASON_ORDER, compareReasons } from '../../../core/scoring/reasons';

const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'reasons.md'), 'utf8');

describe('reason keys', () => {
  test('every key family of docs/architecture.md is defined, each with a one-line description', () => {
    expect(HEALTH_SIGNALS).toEqual(['hard_block', 'challenge', 'soft_block', 'latency']);
    expect(REASON_KEYS).toEqual(
      expect.arrayContaining([
        'total_refusal',
        'majority_refusal',
        'canary_mismatch',
        ...HEALTH_SIGNALS,
        ...EXTRACTION_SIGNALS,
        ...COST_SIGNALS,
        ...ROUTE_REASONS,
      ]),
    );
    const keyShapes = [
      'hard_block',
      'challenge',
      'soft_block',
      'latency',
      'total_refusal',
      'majority_refusal',
      'canary_mismatch',
      'extraction_[a-z_]+',
      'cost_[a-z_]+',
      'route_[a-z_]+',
    ];
    for (const key of REASON_KEYS) {
      expect(key).toMatch(new RegExp(`^(${keyShapes.join('|')})$`));
      expect(REASONS[key]).not.toContain('\n');
      expect(REASONS[key].length).toBeGreaterThan(10);
    }
    expect(isReasonKey('hard_block')).toBe(true);
    expect(isReasonKey('toString')).toBe(false);
  });

  test('docs/reasons.md lists exactly the defined keys, with the same descriptions', () => {
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (.+?) \|/gm)].map((m) => [m[1] ?? '', m[2] ?? ''] as const);
    expect(rows.map(([k]) => k).sort()).toEqual([...REASON_KEYS].sort());
    for (const [key, text] of rows) {
      if (isReasonKey(key)) expect(text).toBe(REASONS[key]);
    }
  });

  test('one order of reasons: every key once, the order an assessment raises them in', () => {
    expect([...REASON_ORDER].sort()).toEqual([...REASON_KEYS].sort());
    expect(new Set(REASON_ORDER).size).toBe(REASON_ORDER.length);
    // A 403 wall on two ticks with slow answers, a lost parser and costlier records: the assessment's own list is in
    // that order.
    const baseline = {
      requests: 10_000,
      hardBlocks: 100,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 200,
      extractionOk: 10_000,
      validRecords: 10_000,
      bytes: 1e8,
    };
    const current = {
      requests: 200,
      hardBlocks: 200,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 800,
      extractionOk: 10,
      extractionEmpty: 190,
      validRecords: 10,
      bytes: 1e7,
    };
    const reasons = assess({ current, baseline, previousRefusal: 1 }).reasons;
    expect(reasons.length).toBeGreaterThan(3);
    expect([...reasons].sort(compareReasons)).toEqual(reasons);
    expect(['no reason', 'latency', 'total_refusal', 'challenge'].sort(compareReasons)).toEqual([
      'total_refusal',
      'challenge',
      'latency',
      'no reason',
    ]);
  });

  test('docs/reasons.md explains every no-score sentence', () => {
    for (const sentence of Object.values(NO_SCORE)) expect(doc).toContain(`| \`${sentence}\` |`);
  });
});
