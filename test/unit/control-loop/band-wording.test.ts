import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bandAction,
  bandCause,
  bandLabel,
  bandPhrase,
  bandTableMarkdown,
  refusalRuleIn,
  scoresText,
} from '../../../core/control/band-wording';
import { parseScoringConfig } from '../../../core/scoring/config';

describe('what put a site in its band', () => {
  test('a refusal rule among the reasons of a resisting tick is the cause, total refusal first', () => {
    expect(bandCause('resisting', ['majority_refusal', 'challenge'])).toEqual({
      kind: 'rule',
      rule: 'majority_refusal',
    });
    expect(bandCause('resisting', ['challenge', 'total_refusal', 'majority_refusal'])).toEqual({
      kind: 'rule',
      rule: 'total_refusal',
    });
    expect(refusalRuleIn(['hard_block'])).toBeNull();
  });

  test('otherwise the score; a rule never explains a band it does not set; nothing judges learning or stopped', () => {
    expect(bandCause('resisting', ['hard_block'])).toEqual({ kind: 'score' });
    // A rule only ever makes a site resisting: a degrading tick's reasons do not name it as the cause.
    expect(bandCause('degrading', ['majority_refusal'])).toEqual({ kind: 'score' });
    expect(bandCause('healthy', [])).toEqual({ kind: 'score' });
    expect(bandCause('learning', ['total_refusal'])).toEqual({ kind: 'none' });
    expect(bandCause('stopped', [])).toEqual({ kind: 'none' });
  });
});

describe('the one wording', () => {
  test('a rule-paused site says which rule, whatever the score', () => {
    expect(bandPhrase({ band: 'resisting', reasons: ['majority_refusal'], score: 75, smoothedScore: 95 })).toBe(
      'resisting: paused by the majority-refusal rule; score 75, smoothed 95',
    );
    expect(bandPhrase({ band: 'resisting', reasons: ['total_refusal', 'hard_block'], score: 65 })).toBe(
      'resisting: paused by the total-refusal rule; score 65',
    );
  });

  test('a band the score set says the scores, nothing it cannot know (a canary floor sets bands too)', () => {
    expect(bandPhrase({ band: 'resisting', reasons: ['hard_block'], score: 40, smoothedScore: 45 })).toBe(
      'resisting: score 40, smoothed 45',
    );
    expect(bandPhrase({ band: 'degrading', reasons: ['canary_mismatch'], score: 100, smoothedScore: 100 })).toBe(
      'degrading: score 100, smoothed 100',
    );
    expect(bandPhrase({ band: 'healthy', reasons: [], score: 95, smoothedScore: 92 })).toBe(
      'healthy: score 95, smoothed 92',
    );
    expect(bandPhrase({ band: 'healthy', reasons: [], score: null, smoothedScore: 90 })).toBe(
      'healthy: no score, smoothed 90',
    );
    expect(bandPhrase({ band: 'stopped', reasons: [], score: null })).toBe('stopped: a person ended the loop');
  });

  test("a frozen band keeps the cause of the tick that set it, whatever the latest tick's reasons", () => {
    const rule = { kind: 'rule', rule: 'majority_refusal' } as const;
    expect(bandPhrase({ band: 'resisting', reasons: ['latency'], score: 98, smoothedScore: 97, cause: rule })).toBe(
      'resisting: paused by the majority-refusal rule; score 98, smoothed 97',
    );
    expect(bandPhrase({ band: 'degrading', reasons: [], score: 70, cause: { kind: 'person' } })).toBe(
      'degrading: score 70',
    );
  });

  test('scores: the smoothed one only where it is known', () => {
    expect(scoresText(61, 66)).toBe('score 61, smoothed 66');
    expect(scoresText(61)).toBe('score 61');
    expect(scoresText(null, null)).toBe('no score');
  });

  test('a table cell names the rule only, the score bands stay bare; a person or nothing adds nothing', () => {
    expect(bandLabel('resisting', { kind: 'rule', rule: 'majority_refusal' })).toBe(
      'resisting (paused by the majority-refusal rule)',
    );
    expect(bandLabel('resisting', { kind: 'score' })).toBe('resisting');
    expect(bandLabel('degrading', { kind: 'person' })).toBe('degrading');
    expect(bandAction('healthy', { kind: 'score' })).toBeNull();
    expect(bandAction('resisting', { kind: 'score' })).toBeNull();
    expect(bandAction('resisting', { kind: 'person' })).toBeNull();
  });
});

describe('the band table', () => {
  test("the README's table is the module's, with the default thresholds and the refusal rules", () => {
    const readme = readFileSync(join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
    const table = bandTableMarkdown();
    expect(readme).toContain(`\n${table.join('\n')}\n`);
    expect(table[4]).toMatch(/^\| resisting \| score below 50, \*\*or a refusal rule fired, whatever the score\*\* \|/);
  });

  test("a site's own thresholds give its own table", () => {
    const bands = parseScoringConfig({ bands: { healthyMin: 85, degradingMin: 60 } }).bands;
    expect(bandTableMarkdown(bands).slice(2, 4)).toEqual([
      '| healthy | score 85–100 | nothing (restores throttled sites step by step) |',
      expect.stringMatching(/^\| degrading \| score 60–84 \| /),
    ]);
  });
});
