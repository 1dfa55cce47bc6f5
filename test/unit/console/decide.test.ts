import { actionPolicySchema, nominalControls, pausedControls } from '../../../core/control/controls';
import { parseDecision } from '../../../core/control/decisions';
import type { SiteHealthState } from '../../../loop/messages';
import { checkDecision } from '../../../server/api/decision-send';
import { cautiousPreview, planDecision, readDecideForm } from '../../../client/console/decide-plan';
import { decidePage, previewPage, resultPage } from '../../../client/console/pages/decide';
import { fleetPage } from '../../../client/console/pages/fleet';
import type { SiteSummary } from '../../../server/api/schemas/sites';
import { buildFleet } from '../../../server/fleet/fleet';

const SITE = 'shop.example.com';
const policy = actionPolicySchema().parse({});
const now = new Date('2026-12-04T12:00:00.000Z');
const pausedAt = '2026-12-04T11:48:00.000Z';
const paused = pausedControls(nominalControls(policy, 'resisting', 'x'), 'resisting', 'paused at tick 9');

const state = (over: Partial<SiteHealthState> = {}): SiteHealthState =>
  ({
    site: SITE,
    band: 'resisting',
    score: 12,
    smoothedScore: 20,
    controls: paused,
    awaitingHuman: {
      kind: 'resisting',
      since: pausedAt,
      reason: 'paused at tick 9: resisting: paused by the total-refusal rule',
      pausedBy: null,
      assessmentKey: null,
      remindersSent: 0,
      lastNotifiedAt: pausedAt,
    },
    lastDecision: null,
    pendingDecisions: 0,
    ...over,
  }) as SiteHealthState;

const signed = { who: 'bob@example.com', csrfToken: 'csrf-value', now };

/** The form as a browser posts it, read and checked as the routes do. */
function plan(form: Record<string, string>, s = state(), who = 'bob@example.com') {
  const read = readDecideForm({ csrf: 'c', ...form });
  if (!read.ok) throw new Error(read.message);
  const checked = checkDecision(who, read.form.fields);
  if (!checked.ok) throw new Error(checked.message);
  return planDecision(s, policy, checked.decision, checked.payload);
}

const message = (form: Record<string, string>): string => {
  const read = readDecideForm({ csrf: 'c', ...form });
  if (!read.ok) return read.message;
  const checked = checkDecision('bob', read.form.fields);
  return checked.ok ? 'ok' : checked.message;
};

test('the form is read with the API body schema, checked with the workflow schema: one line naming the field', () => {
  expect(message({ kind: 'resume', why: '   ' })).toBe(
    'resume: why: required: why, in a sentence (it goes into the audit trail)',
  );
  expect(message({ kind: 'resum', why: 'x' })).toBe('kind: expected one of resume, stop, pause');
  expect(message({ kind: 'resume', why: 'x', mode: 'explicit', concurrency: 'lots', revisitMultiplier: '2' })).toBe(
    'concurrency: expected a whole number 1-10000',
  );
  expect(message({ kind: 'resume', why: 'x', mode: 'explicit', concurrency: '4', revisitMultiplier: '' })).toBe(
    'resume: revisitMultiplier: required with mode "explicit"',
  );
  expect(message({ kind: 'stop', why: 'x', extra: '1' })).toBe('unknown field "extra"');
  // A cautious resume's empty number inputs are absent values, not zeros.
  expect(message({ kind: 'resume', why: 'ok', mode: 'cautious', concurrency: '', revisitMultiplier: ' ' })).toBe('ok');
});

test("a cautious resume's preview: the loop's own controls computation, the gate open, the exact CLI command", () => {
  const p = plan({ kind: 'resume', why: "checked by hand: it's fine", mode: 'cautious' });
  expect(p.before).toEqual(paused);
  expect(p.after).toMatchObject({ concurrencyLimit: 8, revisitMultiplier: 2, paused: false, canaryOnly: false });
  expect({ ...p.after, reason: '' }).toEqual({ ...cautiousPreview(state(), policy), reason: '' });
  expect([p.before?.band, p.after.band, p.notAllowed]).toEqual(['resisting', 'degrading', null]);
  expect(p.command).toBe(
    `target-health decide resume shop.example.com --who bob@example.com --why 'checked by hand: it'\\''s fine' ` +
      '--mode cautious',
  );
  // The same payload the workflow validates.
  expect(parseDecision('resume', p.payload)).toMatchObject({ ok: true });
  const explicit = plan({ kind: 'resume', why: 'x', mode: 'explicit', concurrency: '4', revisitMultiplier: '1.5' });
  expect(explicit.after).toMatchObject({ concurrencyLimit: 4, revisitMultiplier: 1.5, band: 'degrading' });
  expect(explicit.command).toMatch(/ --mode explicit --concurrency 4 --revisit 1\.5$/);
  // The fingerprint moves when the site does, so a stale preview cannot be confirmed.
  const moved = plan(
    { kind: 'resume', why: "checked by hand: it's fine", mode: 'cautious' },
    state({ controls: { ...paused, concurrencyLimit: 3 } }),
  );
  expect(moved.fingerprint).not.toBe(p.fingerprint);
  expect(plan({ kind: 'resume', why: "checked by hand: it's fine", mode: 'cautious' }).fingerprint).toBe(p.fingerprint);
});

test("the gate's refusals in the loop's own words: resume while not waiting, pause twice, anything after stop", () => {
  const running = state({ band: 'healthy', awaitingHuman: null, controls: nominalControls(policy, 'healthy', 'ok') });
  expect(plan({ kind: 'resume', why: 'x' }, running).notAllowed).toBe(
    'resume: shop.example.com is not paused waiting for a decision (band healthy); nothing to resume',
  );
  expect(plan({ kind: 'pause', why: 'x' }).notAllowed).toMatch(/^pause: .* already paused/);
  expect(plan({ kind: 'stop', why: 'x' }, state({ band: 'stopped', awaitingHuman: null })).notAllowed).toMatch(
    /^stop: shop\.example\.com is stopped; start a new loop/,
  );
  const pause = plan({ kind: 'pause', why: 'legal hold' }, running);
  expect(pause.after).toMatchObject({ paused: true, canaryOnly: true, band: 'healthy' });
  expect(plan({ kind: 'stop', why: 'done' }, running).after).toMatchObject({ band: 'stopped', paused: true });
});

/** The Decide page of the paused site for a session that may decide (unless said otherwise). */
const decideOn = (over: Partial<Parameters<typeof decidePage>[0]> = {}): string =>
  decidePage({
    ...signed,
    state: state(),
    cautious: cautiousPreview(state(), policy),
    canDecide: true,
    scopes: ['decide'],
    ...over,
  });

const labelled = (page: string): void => {
  const ids = [...page.matchAll(/<(?:input|textarea|select)(?![^>]*type="hidden")[^>]*\bid="([^"]+)"/g)].map(
    (m) => m[1],
  );
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) expect(page).toContain(`<label for="${id}">`);
};

test('the Decide page: a form per decision the gate allows, each control labelled, the rest explained', () => {
  const page = decideOn();
  expect(page).toContain('action="/console/sites/shop.example.com/decide/preview"');
  expect(page).toContain('<input type="hidden" name="kind" value="resume">');
  expect(page).toContain('<input type="hidden" name="kind" value="stop">');
  expect(page).not.toContain('<input type="hidden" name="kind" value="pause">');
  expect(page).toMatch(/Pause<\/h3><p class="why">Not now: pause: shop\.example\.com is already paused/);
  expect(page).toContain('Cautious: concurrency 8, revisit ×2');
  expect(page).toContain(`<time datetime="${pausedAt}">`);
  expect(page).toContain('12m ago');
  labelled(page);
});

test('a read-only session sees why it cannot decide, and no form', () => {
  const page = decideOn({ canDecide: false, scopes: ['read'] });
  expect(page).not.toContain('/decide/preview');
  expect(page).toContain('with the scope read: deciding needs a token with the scope <code>decide</code>');
});

test('a form sent back keeps what was typed, escaped, and says what was wrong', () => {
  const page = decideOn({
    error: {
      message: 'resume: revisitMultiplier: required with mode "explicit"',
      typed: { kind: 'resume', why: '</textarea><script>x</script>', mode: 'explicit', concurrency: '"4"' },
    },
  });
  expect(page).toContain('Nothing was sent: resume: revisitMultiplier: required with mode &quot;explicit&quot;');
  expect(page).toContain('&lt;/textarea&gt;&lt;script&gt;x&lt;/script&gt;</textarea>');
  expect(page).toContain('value="&quot;4&quot;"');
  expect(page).toMatch(/id="mode-explicit" name="mode" value="explicit" checked>/);
  expect(page).not.toContain('<script>');
});

test('the preview: now and after, the command, a confirm form carrying the fingerprint; hostile text escaped', () => {
  const p = plan({ kind: 'resume', why: '<img src=x onerror=alert(1)>', mode: 'cautious' });
  const page = previewPage({ ...signed, plan: p });
  expect(page).not.toContain('<img');
  expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
  expect(page).toMatch(
    /<th scope="row">Concurrency<\/th>\s*<td data-label="Now">16<\/td><td data-label="After">8 <em>\(changes\)<\/em>/,
  );
  expect(page).toContain('<td data-label="Now">resisting</td><td data-label="After">degrading <em>(changes)</em>');
  expect(page).toContain(`<input type="hidden" name="plan" value="${p.fingerprint}">`);
  expect(page).toContain('<input type="hidden" name="mode" value="cautious">');
  expect(page).toContain('Confirm: resume shop.example.com');
  expect(page).toContain('target-health decide resume shop.example.com --who bob@example.com --why');
  const refused = previewPage({
    ...signed,
    plan: plan({ kind: 'resume', why: 'x' }, state({ band: 'healthy', awaitingHuman: null })),
  });
  expect(refused).not.toContain('Confirm:');
  expect(refused).toContain('The loop would refuse this now: resume: shop.example.com is not paused');
});

test('the result: the decision, the audit entry, the controls the crawler follows, the loop now', () => {
  const after = { ...paused, paused: false, canaryOnly: false, band: 'degrading' as const, concurrencyLimit: 8 };
  const page = resultPage({
    ...signed,
    site: SITE,
    decision: {
      decisionKey: `${SITE}/c/decision/1`,
      site: SITE,
      workflowId: `site-health:${SITE}`,
      chainId: 'c',
      kind: 'resume',
      who: 'bob@example.com',
      why: 'it serves us <again>',
      mode: { mode: 'cautious' },
      via: 'update',
      assessmentKey: null,
      awaitingSince: new Date(pausedAt),
      decidedAt: new Date('2026-12-04T11:59:00.000Z'),
    },
    audit: [
      {
        actionKey: 'k',
        oldControls: { ...paused, version: 4 },
        newControls: { ...after, version: 5 },
        changedFields: ['concurrencyLimit', 'paused'],
        assessmentKey: null,
        decisionKey: `${SITE}/c/decision/1`,
        actor: 'human:bob@example.com',
        reason: 'resumed by bob@example.com (cautious): it serves us <again>',
        changedAt: new Date('2026-12-04T11:59:00.000Z'),
      },
    ],
    controls: {
      ...after,
      site: SITE,
      routeDiagnosis: null,
      workflowId: 'w',
      assessmentKey: null,
      version: 5,
      updatedBy: 'human:bob@example.com',
      updatedAt: new Date('2026-12-04T11:59:00.000Z'),
    },
    state: state({ band: 'degrading', awaitingHuman: null }),
  });
  expect(page).toContain('Applied: resume (cautious) shop.example.com');
  expect(page).toContain('human:bob@example.com');
  expect(page).toContain('concurrency 16→8, unpaused, all traffic, band resisting→degrading');
  expect(page).toContain('it serves us &lt;again&gt;');
  expect(page).toContain('Version 5, written');
});

test('the Fleet page links each site waiting for a person to its Decide page', () => {
  const row = (site: string, awaitingHuman: boolean): SiteSummary => ({
    site,
    workflowId: `site-health:${site}`,
    band: awaitingHuman ? 'resisting' : 'healthy',
    score: 50,
    smoothedScore: 50,
    parserHealth: 99,
    awaitingHuman,
    awaitingSince: awaitingHuman ? pausedAt : null,
    problem: null,
    loopStartedAt: null,
    lastChange: null,
    lastAssessedAt: null,
  });
  const page = fleetPage({
    fleet: buildFleet(
      [row('a.example.com', true), row('b.example.com', false)],
      { bands: null, awaiting: false, site: [] },
      now,
    ),
    form: { band: '', awaiting: false, site: '' },
    ...signed,
  });
  expect(page).toContain('<a href="/console/sites/a.example.com/decide">Decide</a>');
  expect(page).not.toContain('/console/sites/b.example.com/decide');
});
