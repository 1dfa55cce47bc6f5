/**
 * The control loop on the real dev server and the real PostgreSQL, fed through the real signal store:
 * a scripted site goes healthy → degrading → resisting; the controls change at each step; the run waits
 * for a person; a `resume` signal sent with the official `temporal` CLI continues it (restoring step by
 * step); a `stop` sent with `target-health decide stop` completes it with a summary.
 */
import { spawn } from 'node:child_process';
import { workflowIdForSite } from '../../core/common/names';
import { AwaitingHuman, HealthBand, HealthScore, TargetSite } from '../../loop/search-attributes';
import { controlAudit, readControls } from '../../server/db/controls';
import { listDecisions } from '../../server/db/decisions';
import { listNotifications } from '../../server/db/notifications';
import { ensureTemporalCli } from '../../stack/temporal-cli';
import { type SiteHealthSummary, stateQuery } from '../../loop/messages';
import { ingestNow, loopInput, prepareSite, startLoop, waitForState } from '../kit/control-loop';
import { CLI, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

/** Runs the official Temporal CLI (the binary the stack provisions). */
async function temporalCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = await ensureTemporalCli({ info: () => undefined, warn: () => undefined });
  if (cli.kind !== 'binary') throw new Error('the temporal CLI binary is needed for this test');
  return new Promise((resolve, reject) => {
    const child = spawn(cli.path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Events before the resume are stamped 2.5 minutes ago: the store's windows are whole minutes, and after
// a resume the loop judges only minutes from the decision on — so they are out of that window for sure.
const BEFORE = 150_000;

test(
  'healthy → degrading → resisting, waits for a person; resume (temporal CLI) restores step by step; stop ' +
    'completes it',
  async () => {
    const site = await prepareSite(h.pool, 'loop');
    await ingestNow(h.pool, site, { ok: 100 }, BEFORE);
    const { worker, connection } = await createTestWorker(h);
    const workflowId = workflowIdForSite(site);

    await worker.runUntil(async () => {
      const handle = await startLoop(h.client, h.taskQueue, loopInput(site));

      // Healthy: nominal controls written on the first tick, nothing else.
      const healthy = await waitForState(handle, 'healthy', (s) => s.band === 'healthy' && s.controls !== null);
      expect(healthy.controls).toMatchObject({
        concurrencyLimit: 16,
        revisitMultiplier: 1,
        paused: false,
        canaryOnly: false,
        effectiveCostMultiplier: 1,
      });
      expect(healthy.score).toBe(100);

      // 60 of 200 requests hard-blocked (30% vs a normal of 0): score 65 → degrading, a step per tick.
      await ingestNow(h.pool, site, { hard: 60, ok: 40 }, BEFORE);
      const degrading = await waitForState(
        handle,
        'two degrading steps',
        (s) => s.band === 'degrading' && (s.controls?.concurrencyLimit ?? 99) <= 9,
      );
      expect(degrading.reasons).toContain('hard_block');
      expect(degrading.controls!.revisitMultiplier).toBeGreaterThan(1);
      expect(degrading.controls!.effectiveCostMultiplier).toBeGreaterThan(1);
      expect(degrading.controls!.paused).toBe(false);
      const stored = await readControls(h.pool, site);
      expect(stored).toMatchObject({ band: 'degrading', paused: false });
      expect(stored!.routeDiagnosis).toMatchObject({ verdict: expect.any(String), summary: expect.any(String) });

      // Challenges and soft blocks on top: score 24 → resisting: paused, canaries only, waiting.
      await ingestNow(h.pool, site, { challenge: 100, soft: 100 }, BEFORE);
      const paused = await waitForState(
        handle,
        'resisting and waiting',
        (s) => s.band === 'resisting' && s.awaitingHuman !== null,
      );
      expect(paused.controls).toMatchObject({ paused: true, canaryOnly: true, band: 'resisting' });
      expect(paused.awaitingHuman).toMatchObject({ kind: 'resisting', since: expect.any(String) });
      expect(await readControls(h.pool, site)).toMatchObject({ paused: true, canaryOnly: true, band: 'resisting' });

      // The Temporal UI's story: search attributes, and the list query that finds paused sites.
      const described = await handle.describe();
      expect(described.typedSearchAttributes.get(HealthBand)).toBe('resisting');
      expect(described.typedSearchAttributes.get(AwaitingHuman)).toBe(true);
      expect(described.typedSearchAttributes.get(TargetSite)).toBe(site);
      expect(described.typedSearchAttributes.get(HealthScore)).toBeLessThan(50);
      await eventually(async () => {
        const found: string[] = [];
        for await (const w of h.client.workflow.list({ query: `HealthBand="resisting" AND TargetSite="${site}"` }))
          found.push(w.workflowId);
        return found.includes(workflowId) ? found : undefined;
      }, 'the site in HealthBand="resisting"');

      // The owner was told, with the evidence, and delivery (log channel here) completed.
      const notes = await eventually(async () => {
        const n = await listNotifications(h.pool, site);
        return n.length >= 2 && n.every((x) => x.deliveredAt !== null) ? n : undefined;
      }, 'notifications delivered');
      expect(notes.map((n) => n.kind)).toEqual(['degrading', 'resisting']);
      const resisting = notes[1]!.payload as {
        recipient: string;
        link: string;
        evidence: {
          score: number;
          smoothedScore: number;
          reasons: string[];
          signals: Array<{ signal: string }>;
          routes: { verdict: string };
          recentHistory: unknown[];
        };
      };
      expect(resisting.recipient).toBe(`owner@${site}`);
      expect(resisting.link).toContain(encodeURIComponent(workflowId));
      expect(resisting.evidence.score).toBeLessThan(50);
      expect(resisting.evidence.reasons).toEqual(expect.arrayContaining(['hard_block', 'challenge', 'soft_block']));
      expect(resisting.evidence.signals.map((s) => s.signal)).toEqual(
        expect.arrayContaining(['hard_block', 'challenge', 'soft_block', 'latency']),
      );
      expect(resisting.evidence.routes.verdict).toBeDefined();
      expect(resisting.evidence.recentHistory.length).toBeGreaterThanOrEqual(3);

      // What on-call sees from the CLI.
      const cliEnv = cleanEnv({ TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'), DATABASE_URL: env('DATABASE_URL') });
      const status = await run(CLI, ['status', site], cliEnv);
      // The band line names what paused the loop: the majority-refusal rule when the pausing tick's reasons
      // carry it, else the score alone. Which comes first depends on the ticks' spacing (the smoothing is per
      // unit of time: a tick delayed on a busy machine can take the smoothed score below 50 before the rule's
      // two-tick streak completes), so the test reads the pausing tick's reasons from the same output.
      const pausedOn = /^waiting\s+YES since \S+ \(resisting: paused at tick \d+: (.*)\)/m.exec(status.stdout);
      expect(pausedOn).not.toBeNull();
      expect(status.stdout).toMatch(
        pausedOn![1]!.includes('majority_refusal')
          ? /^band\s+resisting \(paused by the majority-refusal rule\)$/m
          : /^band\s+resisting$/m,
      );
      expect(status.stdout).toMatch(/^controls\s+PAUSED \(canaries only\)/m);
      expect(status.stdout).toMatch(/^waiting\s+YES since /m);
      const controls = await run(CLI, ['controls', site, '--json'], cliEnv);
      expect(JSON.parse(controls.stdout)).toMatchObject({
        controls: { paused: true, canaryOnly: true, band: 'resisting' },
        changes: expect.any(Array),
      });

      // While waiting it keeps assessing and does nothing on its own.
      const auditWhilePaused = (await controlAudit(h.pool, site)).length;
      const later = await waitForState(handle, 'three more ticks while waiting', (s) => s.tick >= paused.tick + 3);
      expect(later.band).toBe('resisting');
      expect(later.awaitingHuman?.since).toBe(paused.awaitingHuman!.since);
      expect((await controlAudit(h.pool, site)).length).toBe(auditWhilePaused);

      // A person resumes it — with the official temporal CLI, as a signal.
      const signalled = await temporalCli([
        'workflow',
        'signal',
        '--address',
        env('TEMPORAL_ADDRESS'),
        '--namespace',
        'default',
        '--workflow-id',
        workflowId,
        '--name',
        'resume',
        '--input',
        JSON.stringify({ who: 'alice@example.com', why: 'checked the terms; going slower', mode: 'cautious' }),
      ]);
      expect({ code: signalled.code, stderr: signalled.stderr }).toEqual({ code: 0, stderr: '' });
      const resumed = await waitForState(
        handle,
        'resumed',
        (s) => s.awaitingHuman === null && s.lastDecision?.kind === 'resume',
      );
      expect(resumed.controls).toMatchObject({
        concurrencyLimit: 8,
        revisitMultiplier: 2,
        paused: false,
        canaryOnly: false,
        band: 'degrading',
      });
      expect(resumed.lastDecision).toMatchObject({
        who: 'alice@example.com',
        via: 'signal',
        mode: { mode: 'cautious' },
      });

      // Healthy traffic after the decision: the loop restores the controls a step per tick. Only whole
      // minutes from the decision on are judged, so the traffic counts once such a minute has passed
      // (up to two minutes after the resume; until then the loop holds the resume's controls).
      const restored = await eventually(
        async () => {
          const s = await handle.query(stateQuery);
          if (s.controls?.concurrencyLimit === 16 && s.controls.revisitMultiplier === 1) return s;
          await ingestNow(h.pool, site, { ok: 60 });
          return undefined;
        },
        'restored to nominal',
        200_000,
      );
      expect(restored.band).toBe('healthy');

      // Stop, with our CLI (an update: it answers), completes the workflow with a summary.
      const stopped = await run(
        CLI,
        ['decide', 'stop', site, '--who', 'bob@example.com', '--why', 'we use the official feed now'],
        cliEnv,
      );
      expect(stopped.stderr).toBe('');
      expect(stopped.stdout).toMatch(/^stop applied to .* band stopped, stopped \(decision /m);
      const summary = (await handle.result()) as SiteHealthSummary;
      expect(summary).toMatchObject({
        site,
        outcome: 'stopped',
        stoppedBy: 'bob@example.com',
        why: 'we use the official feed now',
        finalBand: 'healthy',
        decisions: 2,
      });
      expect(summary.bandTicks.degrading).toBeGreaterThan(0);
      expect(summary.bandTicks.resisting).toBeGreaterThanOrEqual(4);
      expect(summary.ticks).toBeGreaterThan(8);
      expect((await handle.describe()).typedSearchAttributes.get(HealthBand)).toBe('stopped');
    });
    await connection.close();

    // The audit trail: one row per change, each old → new continuing the previous row, who and why.
    const audit = await controlAudit(h.pool, site);
    audit.forEach((row, i) => {
      expect(row.newControls.version).toBe(i + 1);
      if (i > 0) expect(row.oldControls).toEqual(audit[i - 1]!.newControls);
    });
    const concurrency = audit.map((a) => a.newControls.concurrencyLimit);
    const actors = audit.map((a) => a.actor);
    const pauseAt = audit.findIndex((a) => a.newControls.paused);
    const resumeAt = audit.findIndex((a) => a.actor === 'human:alice@example.com');
    expect(concurrency[0]).toBe(16);
    // Degrading: multiplicative steps 16 → 12 → 9 …, one per tick, by the loop, each with its assessment.
    expect(concurrency.slice(1, 3)).toEqual([12, 9]);
    for (const a of audit.slice(0, pauseAt + 1))
      expect(a).toMatchObject({ actor: 'control-loop', assessmentKey: expect.stringContaining(site) });
    expect(audit[pauseAt]!.newControls).toMatchObject({ paused: true, canaryOnly: true, band: 'resisting' });
    expect(audit[resumeAt]).toMatchObject({
      decisionKey: expect.stringContaining('/decision/1'),
      newControls: { concurrencyLimit: 8, paused: false },
    });
    // Restoring: +2 per step from 8, never one jump.
    const restoreSteps = concurrency.slice(resumeAt);
    expect(restoreSteps.slice(0, 5)).toEqual([8, 10, 12, 14, 16]);
    expect(actors[actors.length - 1]).toBe('human:bob@example.com');
    expect(audit[audit.length - 1]!.newControls).toMatchObject({ band: 'stopped', paused: true });
    expect(await readControls(h.pool, site)).toMatchObject({ band: 'stopped', paused: true, canaryOnly: false });

    // Every decision stored once, with the assessment that led to it.
    const decisions = await listDecisions(h.pool, site);
    expect(decisions.map((d) => [d.kind, d.via, d.who])).toEqual([
      ['resume', 'signal', 'alice@example.com'],
      ['stop', 'update', 'bob@example.com'],
    ]);
    expect(decisions[0]!.assessmentKey).toBe(audit[pauseAt]!.assessmentKey);
    expect(decisions[0]!.awaitingSince).not.toBeNull();
    const { rows } = await h.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM assessments WHERE assessment_key = $1',
      [decisions[1]!.assessmentKey],
    );
    expect(Number(rows[0]!.n)).toBe(1);
  },
  360_000,
);
