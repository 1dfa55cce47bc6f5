import { actionPolicySchema, nominalControls } from '../../../core/control/controls';
import { asFlags } from '../../../client/commands/decide';
import { afterDecision, decisionControls, decisionNotice } from '../../../core/control/decide';
import { decisionNotAllowed, parseDecision, type ParsedDecision } from '../../../core/control/decisions';
import { initialLoopState, type LoopState } from '../../../core/control/loop-state';

const policy = actionPolicySchema().parse({});
const gate = { site: 'shop.example.com', band: 'healthy', stopped: false, awaiting: false };

describe('decision payloads', () => {
  test.each([
    [
      { who: 'alice', why: 'checked' },
      { kind: 'resume', who: 'alice', why: 'checked', mode: { mode: 'cautious' } },
    ],
    [
      { who: ' alice ', why: 'checked', mode: 'cautious' },
      { kind: 'resume', who: 'alice', why: 'checked', mode: { mode: 'cautious' } },
    ],
    [
      { who: 'alice', why: 'checked', mode: 'explicit', concurrency: 4, revisitMultiplier: 2.5 },
      {
        kind: 'resume',
        who: 'alice',
        why: 'checked',
        mode: { mode: 'explicit', concurrency: 4, revisitMultiplier: 2.5 },
      },
    ],
    // Settings without a mode mean explicit.
    [
      { who: 'alice', why: 'checked', concurrency: 2, revisitMultiplier: 1 },
      {
        kind: 'resume',
        who: 'alice',
        why: 'checked',
        mode: { mode: 'explicit', concurrency: 2, revisitMultiplier: 1 },
      },
    ],
  ])('resume %j is accepted', (payload, expected) => {
    expect(parseDecision('resume', payload)).toEqual({ ok: true, decision: expected });
  });

  test.each([
    [
      undefined,
      'resume: expected a JSON object like {"who": "alice@example.com", "why": "checked the terms", "mode": ' +
        '"cautious"}',
    ],
    [{ why: 'x' }, 'resume: who: required: who decides, e.g. "alice@example.com"'],
    [{ who: '   ', why: 'x' }, 'resume: who: required: who decides, e.g. "alice@example.com"'],
    [{ who: 'a', why: '' }, 'resume: why: required: why, in a sentence (it goes into the audit trail)'],
    [
      { who: 'a', why: 'x', mode: 'fast' },
      'resume: mode: expected mode: "cautious" (degrading-band controls) or "explicit" with concurrency and ' +
        'revisitMultiplier',
    ],
    [
      { who: 'a', why: 'x', mode: 'explicit' },
      'resume: concurrency: required with mode "explicit"; revisitMultiplier: required with mode "explicit"',
    ],
    [
      { who: 'a', why: 'x', mode: 'cautious', concurrency: 3 },
      'resume: mode: is "cautious", which sets its own controls; drop concurrency/revisitMultiplier or use ' +
        'mode "explicit"',
    ],
    [
      { who: 'a', why: 'x', concurrency: 0, revisitMultiplier: 1 },
      'resume: concurrency: expected a whole number 1-10000',
    ],
    [
      { who: 'a', why: 'x', concurrency: 2, revisitMultiplier: 0.5 },
      'resume: revisitMultiplier: expected a number 1-100 (1 = usual revisit intervals)',
    ],
    [{ who: 'a', why: 'x', reason: 'y' }, 'resume: unknown field "reason"'],
  ])('resume %j is refused: %s', (payload, message) => {
    expect(parseDecision('resume', payload)).toEqual({ ok: false, message });
  });

  // These once passed validation and then failed the action activity on every retry (PostgreSQL refuses
  // NUL and lone surrogates), with a later stop queued behind them.
  test.each([
    [
      'NUL in who',
      { who: 'al\u0000ice', why: 'x' },
      'pause: who: must be plain text: no NUL or control characters, no broken Unicode (lone surrogates)',
    ],
    [
      'lone surrogate in who',
      { who: 'alice \ud83d', why: 'x' },
      'pause: who: must be plain text: no NUL or control characters, no broken Unicode (lone surrogates)',
    ],
    [
      'control character in why',
      { who: 'alice', why: 'held\u0007' },
      'pause: why: must be plain text: no NUL or control characters, no broken Unicode (lone surrogates)',
    ],
  ])('%s is refused at validation', (_name, payload, message) => {
    expect(parseDecision('pause', payload)).toEqual({ ok: false, message });
  });

  test('emoji, accents and new lines in why are fine', () => {
    expect(parseDecision('pause', { who: 'zoë 👩‍💻', why: 'legal hold\nsee ticket 42' })).toMatchObject({
      ok: true,
      decision: { who: 'zoë 👩‍💻', why: 'legal hold\nsee ticket 42' },
    });
  });

  test('stop and pause take who and why only', () => {
    expect(parseDecision('stop', { who: 'bob', why: 'feed' })).toEqual({
      ok: true,
      decision: { kind: 'stop', who: 'bob', why: 'feed' },
    });
    expect(parseDecision('pause', { who: 'bob', why: 'x', mode: 'cautious' })).toEqual({
      ok: false,
      message: 'pause: unknown field "mode"',
    });
    expect(parseDecision('stop', [])).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^stop: expected a JSON object/),
    });
  });

  test('when each decision is allowed', () => {
    expect(decisionNotAllowed('resume', gate)).toBe(
      'resume: shop.example.com is not paused waiting for a decision (band healthy); nothing to resume',
    );
    expect(decisionNotAllowed('resume', { ...gate, awaiting: true })).toBeNull();
    expect(decisionNotAllowed('pause', gate)).toBeNull();
    expect(decisionNotAllowed('pause', { ...gate, awaiting: true })).toBe(
      'pause: shop.example.com is already paused and waiting for a decision; send resume or stop',
    );
    expect(decisionNotAllowed('stop', gate)).toBeNull();
    expect(decisionNotAllowed('stop', { ...gate, awaiting: true })).toBeNull();
    expect(decisionNotAllowed('stop', { ...gate, stopped: true })).toMatch(/is stopped; start a new loop/);
  });
});

describe('what a decision does', () => {
  const paused: LoopState = {
    ...initialLoopState('chain'),
    tick: 9,
    band: 'resisting',
    scoredBand: 'resisting',
    smoothedScore: 30,
    scoring: { smoothed: { value: 30.2, pendingMs: 0 }, band: 'resisting', refusalStreak: 2 },
    controls: {
      ...nominalControls(policy, 'resisting', 'paused'),
      concurrencyLimit: 3,
      revisitMultiplier: 5,
      paused: true,
      canaryOnly: true,
      effectiveCostMultiplier: 3.3,
    },
    awaiting: {
      kind: 'resisting',
      since: '2025-03-14T10:00:00.000Z',
      reason: 'r',
      pausedBy: null,
      assessmentKey: 'k9',
      remindersSent: 2,
      lastNotifiedAt: '2025-03-14T18:00:00.000Z',
    },
    lastAssessmentKey: 'k12',
  };
  const meta = {
    decisionKey: 'shop.example.com/chain/decision/1',
    via: 'update' as const,
    decidedAt: '2025-03-14T19:00:00.000Z',
  };

  test(
    'cautious resume: degrading-band controls, ' + 'production traffic back, the loop judges afresh from the decision',
    () => {
      const d: ParsedDecision = { kind: 'resume', who: 'alice', why: 'ok', mode: { mode: 'cautious' } };
      const next = decisionControls(paused, d, policy);
      expect(next).toMatchObject({
        concurrencyLimit: 8,
        revisitMultiplier: 2,
        paused: false,
        canaryOnly: false,
        band: 'degrading',
        effectiveCostMultiplier: 3.3,
        reason: 'resumed by alice (cautious): ok',
      });
      const after = afterDecision(paused, d, next, meta);
      expect(after).toMatchObject({
        awaiting: null,
        band: 'degrading',
        evidenceSince: meta.decidedAt,
        scoring: { smoothed: { value: null, pendingMs: 0 }, band: 'degrading', refusalStreak: 0 },
      });
      // Stored with the assessment that paused the site.
      expect(after.lastDecision).toMatchObject({
        kind: 'resume',
        who: 'alice',
        assessmentKey: 'k9',
        decidedAt: meta.decidedAt,
        via: 'update',
      });
      expect(decisionNotice('shop.example.com', paused, d, next)).toMatchObject({
        kind: 'resumed',
        audience: 'owner',
        title: 'shop.example.com resumed by alice (cautious)',
      });
    },
  );

  test('explicit resume takes the numbers as given', () => {
    const d: ParsedDecision = {
      kind: 'resume',
      who: 'alice',
      why: 'ok',
      mode: { mode: 'explicit', concurrency: 5, revisitMultiplier: 1.5 },
    };
    expect(decisionControls(paused, d, policy)).toMatchObject({
      concurrencyLimit: 5,
      revisitMultiplier: 1.5,
      paused: false,
      canaryOnly: false,
    });
  });

  test('pause by hand waits for a decision; stop marks the site stopped', () => {
    const running: LoopState = {
      ...initialLoopState('chain'),
      band: 'healthy',
      controls: nominalControls(policy, 'healthy', 'ok'),
      lastAssessmentKey: 'k3',
    };
    const pause: ParsedDecision = { kind: 'pause', who: 'carol', why: 'legal' };
    const pausedControls = decisionControls(running, pause, policy);
    expect(pausedControls).toMatchObject({ paused: true, canaryOnly: true, band: 'healthy', concurrencyLimit: 16 });
    expect(afterDecision(running, pause, pausedControls, meta).awaiting).toEqual({
      kind: 'manual',
      since: meta.decidedAt,
      reason: 'paused by carol: legal',
      pausedBy: 'carol',
      assessmentKey: 'k3',
      remindersSent: 0,
      lastNotifiedAt: meta.decidedAt,
    });
    const stop: ParsedDecision = { kind: 'stop', who: 'bob', why: 'feed' };
    const stopped = decisionControls(paused, stop, policy);
    expect(stopped).toMatchObject({ band: 'stopped', paused: true, canaryOnly: false });
    expect(afterDecision(paused, stop, stopped, meta)).toMatchObject({ band: 'stopped', awaiting: null });
  });
});

test('on the command line, refusals name the flags', () => {
  const parsed = parseDecision('resume', { who: 'a', why: 'x', mode: 'explicit' });
  expect(parsed.ok || asFlags(parsed.message)).toBe(
    'resume: --concurrency: required with mode "explicit"; --revisit: required with mode "explicit"',
  );
  expect(asFlags('resume: who: required: who decides, e.g. "alice@example.com"')).toBe(
    'resume: --who: required: who decides, e.g. "alice@example.com"',
  );
});
