/**
 * Fuzzing a running loop's signals and updates, on the real dev server and PostgreSQL: a
 * healthy site's loop (1 s ticks, continue-as-new every 2 ticks) gets a few hundred `resume`, `stop`
 * and `pause` messages, as signals and as updates, built by fast-check — valid decisions, hostile
 * payloads (NUL, lone surrogates, line breaks in who/why, numbers at the edges, non-objects, deep
 * nesting) and 1.5 MB unknown keys, the reproduction of a loop once wedged by three such refused
 * signals echoed into its state and carried through continue-as-new.
 *
 * Asserted throughout: the `state` query answers; `rejected` holds at most 5 entries of at most 500
 * characters, one line each; refused updates come back as one line naming the field; accepted updates
 * return their result. At the end: a `stop` update completes the loop; it continued as new (runs > 1)
 * and each run started from a small input (refusals are not carried whole); no run's history has a
 * workflow task failure; the decisions table holds exactly the decisions the workflow applied, once
 * each, every one storable.
 *
 * TH_FUZZ_RUNS sets the number of messages (default 200, CI-sized); TH_FUZZ_SEED replays a run. The
 * seed is printed at the start and in any failure.
 */
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import fc from 'fast-check';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { listDecisions } from '../../server/db/decisions';
import {
  DECISION_KINDS,
  type DecisionKind,
  type DecisionResult,
  type SiteHealthState,
  LoopErrors,
  decisionMessages,
  stateQuery,
  stopUpdate,
} from '../../loop/messages';
import { REJECTED_LIMIT } from '../../core/control/loop-state';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { executeUpdateRetrying } from '../../server/temporal/update-retry';
import { chainHistories, historyFacts } from '../kit/fault-checks';
import { createTestWorker, env, openHarness, type TestHarness } from '../kit/services';
import { hasRawControl, nastyShortString, nested, objectOf } from '../kit/hostile-fuzz';

const RUNS = Number(process.env.TH_FUZZ_RUNS ?? 200);
const SEED = Number(process.env.TH_FUZZ_SEED ?? Date.now() % 2 ** 31);
/**
 * The test's time budget follows its work. A normal seed takes ~30 s; what varies is how many workflow
 * tasks fail on gRPC's 4 MB limit (below: several 1.5 MB updates refused in one activation), and each
 * costs the loop a workflow-task retry — measured ~14 s each: seed 796890344 had 6 and took 115 s on a
 * quiet machine, past the project's default 120 s on a loaded one. At most one such failure per huge
 * payload (fast-check gives ~15 per 200 messages), so the budget is the base plus that worst case per
 * message, with the same again for a loaded machine. Liveness is asserted step by step (each tick within
 * 30 s), not by this budget.
 */
const TASK_RETRY_MS = 15_000;
const BUDGET_MS = 2 * (30_000 + RUNS * 0.1 * TASK_RETRY_MS);
/** Messages sent at once, before the state is queried again. */
const BATCH = 10;
/** The workflow keeps each refusal cut to this many characters (workflows/decision-inbox.ts). */
const MAX_REJECTED_CHARS = 500;
/** What a continued run may be started with: settings and carried state, never the payloads it refused. */
const MAX_RUN_INPUT_BYTES = 128 * 1024;
/**
 * Temporal's limits on events buffered while a workflow task runs (history.maximumBufferedEventsSizeInBytes / …Batch).
 */
/** A flush the server forces carries at least one of the large (1 MB+) fuzzed payloads, or many events. */
const LARGE_SIGNAL_BYTES = 1024 * 1024;
const SERVER_BUFFERED_EVENTS = 100;
/**
 * A run's history beyond the payloads it received (ticks, activities, decisions): nothing refused is copied into it.
 */
const MAX_RUN_OWN_HISTORY_BYTES = 1024 * 1024;

const E = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const eventBytes = (e: HistoryEvent): number => temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
/** Bytes of the signal payloads a run received (they are history by design: Temporal records every signal). */
const signalBytes = (e: HistoryEvent): number =>
  e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    ? (e.workflowExecutionSignaledEventAttributes?.input?.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0)
    : 0;

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

type Message = { via: 'signal' | 'update'; kind: DecisionKind; payload: unknown };

/**
 * 1.5 MB of text with hostile ends. Its body is ASCII: the server refuses payloads over 2 MB (its blob
 * limit), and escaped NULs or emoji would take the same text past it.
 */
const huge = fc
  .tuple(nastyShortString, nastyShortString)
  .map(([head, tail]) => `${head}${'k'.repeat(1_500_000)}${tail}`);

const who = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('alice@example.com', 'on-call', ' bob ') },
  { weight: 2, arbitrary: nastyShortString },
  { weight: 1, arbitrary: fc.constant('x'.repeat(201)) },
);
const why = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('fuzzing the loop', 'checked\nthe terms') },
  { weight: 2, arbitrary: nastyShortString },
  { weight: 1, arbitrary: fc.constant('') },
);

/** Valid decisions (pause and resume; a valid stop would end the loop early) and every way to get one wrong. */
const message: fc.Arbitrary<Message> = fc.record({
  via: fc.constantFrom('signal' as const, 'update' as const),
  kind: fc.constantFrom(...DECISION_KINDS),
  payload: fc.oneof(
    { weight: 8, arbitrary: fc.record({ who, why }) },
    {
      weight: 3,
      arbitrary: fc.record(
        {
          who,
          why,
          mode: fc.constantFrom('cautious', 'explicit', 'fast'),
          concurrency: fc.constantFrom(4, 0, 10_001, 2.5, Number.NaN, '4'),
          revisitMultiplier: fc.constantFrom(2, 0.5, Number.POSITIVE_INFINITY),
        },
        { requiredKeys: ['who', 'why'] },
      ),
    },
    // The reproduction: a refused payload carrying a 1.5 MB unknown key (and prototype keys).
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.tuple(huge, fc.constantFrom('__proto__', 'constructor')).map(([key, proto]) =>
          objectOf([
            ['who', 'alice@example.com'],
            ['why', 'x'],
            [key, 1],
            [proto, { polluted: true }],
          ]),
        ),
        fc.record({ who: fc.constant('alice@example.com'), why: huge }),
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'resume', 42, [], [{ who: 'a', why: 'b' }], true) },
    {
      weight: 1,
      arbitrary: fc
        .nat({ max: 2_000 })
        .map((depth) => ({ who: 'alice@example.com', why: 'deep', mode: nested(depth, 'object', 'cautious') })),
    },
  ),
});

/** A stop must not be valid: the loop would end before the run is over (the last message is a real stop). */
function defused(m: Message): Message {
  if (m.kind !== 'stop' || m.payload === null || typeof m.payload !== 'object' || Array.isArray(m.payload)) return m;
  return { ...m, payload: objectOf([...Object.entries(m.payload), ['reason', 'stop is sent once, at the end']]) };
}

/** What is wrong with a refusal as people read it (state query, CLI, logs). */
function refusalProblems(text: string): string[] {
  const problems: string[] = [];
  if (text.length > MAX_REJECTED_CHARS) problems.push(`${text.length} characters`);
  if (hasRawControl(text)) problems.push('not one line');
  if (!isWellFormed(text)) problems.push('not well formed');
  if (!/^(resume|stop|pause): \S/.test(text)) problems.push('does not start with the decision');
  return problems.map((p) => `${p}: ${JSON.stringify(text.slice(0, 200))}`);
}

/** A message carrying a payload of a megabyte or more (the fuzzer's 1.5 MB unknown keys). */
const isHuge = (m: Message): boolean => JSON.stringify(m.payload ?? null).length > 1_000_000;

function stateProblems(s: SiteHealthState): string[] {
  const problems = s.rejected.flatMap(refusalProblems);
  if (s.rejected.length > REJECTED_LIMIT) problems.push(`${s.rejected.length} refusals kept`);
  return problems;
}

test(
  `a running loop survives ${RUNS} fuzzed signals and updates, 1.5 MB refusals included, across continue-as-new`,
  async () => {
    process.stderr.write(`[fuzz-decisions] seed ${SEED} (TH_FUZZ_SEED=${SEED} replays it), ${RUNS} messages\n`);
    const messages = fc.sample(message, { seed: SEED, numRuns: RUNS }).map(defused);
    const site = await prepareSite(h.pool, 'fuzz');
    await ingestNow(h.pool, site, { ok: 100 }, 150_000);
    const { worker, connection } = await createTestWorker(h);
    const figures = {
      signals: 0,
      updates: 0,
      updatesAccepted: 0,
      updatesRefused: 0,
      updatesNotAllowed: 0,
      hugePayloads: 0,
      stateQueries: 0,
      maxQueryMs: 0,
    };
    const problems: string[] = [];

    try {
      await worker.runUntil(async () => {
        const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site, { maxTicksPerRun: 2 }));
        const accepted: DecisionResult[] = [];

        const send = async (m: Message, i: number): Promise<void> => {
          const { signal, update } = decisionMessages[m.kind];
          if (isHuge(m)) figures.hugePayloads += 1;
          if (m.via === 'signal') {
            figures.signals += 1;
            // Signals are fire and forget: the server takes any payload under its size limit.
            await handle.signal(signal, m.payload as never);
            return;
          }
          figures.updates += 1;
          try {
            // As `target-health decide` sends it: retried while the server refuses it during a task retry.
            const result = await executeUpdateRetrying(handle, update as typeof decisionMessages.pause.update, [
              m.payload as never,
            ]);
            figures.updatesAccepted += 1;
            accepted.push(result);
            if (result.decision !== m.kind || !result.decisionKey)
              problems.push(`message ${i}: update answered ${JSON.stringify(result)}`);
          } catch (err) {
            const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
            if (!(cause instanceof ApplicationFailure)) {
              // The gRPC status behind a ServiceError says what the server refused (code and details).
              const status = err instanceof Error ? (err.cause as { code?: unknown; details?: unknown }) : undefined;
              const grpc =
                status === undefined ? '' : ` (${JSON.stringify({ code: status.code, details: status.details })})`;
              throw new Error(`message ${i} (${m.kind} update): ${String(err)}${grpc}`);
            }
            if (cause.type === LoopErrors.InvalidDecision) figures.updatesRefused += 1;
            else if (cause.type === LoopErrors.DecisionNotAllowed) figures.updatesNotAllowed += 1;
            else problems.push(`message ${i}: refused as ${cause.type}`);
            problems.push(...refusalProblems(cause.message).map((p) => `message ${i} (${m.kind} update): ${p}`));
          }
        };

        const queryState = async (): Promise<SiteHealthState> => {
          const started = Date.now();
          const s = await handle.query(stateQuery);
          figures.stateQueries += 1;
          figures.maxQueryMs = Math.max(figures.maxQueryMs, Date.now() - started);
          return s;
        };

        /** Polls the state (checking it each time) until the loop has ticked past `tick`: it carries on. */
        const nextTick = async (tick: number, what: string, hugeInBatch = 0): Promise<SiteHealthState> => {
          // 30 s for a tick, and a task retry's worth more (doubled for a loaded machine) per huge payload just sent.
          for (const deadline = Date.now() + 30_000 + hugeInBatch * 2 * TASK_RETRY_MS; ;) {
            const s = await queryState();
            problems.push(...stateProblems(s).map((p) => `${what}: ${p}`));
            if (s.tick > tick) return s;
            if (Date.now() > deadline)
              throw new Error(`${what}: the loop stopped ticking at tick ${s.tick}, run ${s.runs}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        };

        // A batch at a time, each followed by a tick: with two ticks a run, the loop continues as new
        // every other batch, with refusals (and 1.5 MB payloads) in flight.
        let state = await queryState();
        for (let from = 0; from < messages.length; from += BATCH) {
          const batch = messages.slice(from, from + BATCH);
          const sent = await Promise.allSettled(batch.map((m, j) => send(m, from + j)));
          for (const r of sent) if (r.status === 'rejected') throw r.reason;
          state = await nextTick(state.tick, `after message ${from + BATCH}`, batch.filter(isHuge).length);
        }
        // (A short run — TH_FUZZ_RUNS=20 — may end before the first continue-as-new: tick on to it.)
        while (state.runs < 2) state = await nextTick(state.tick, 'until continue-as-new');

        // A real stop ends it, answered like any accepted update.
        const stop = await handle.executeUpdate(stopUpdate, {
          args: [{ who: 'fuzz@example.com', why: 'end of the fuzz run' }],
        });
        expect(stop.decision).toBe('stop');
        const summary = await handle.result();
        expect(summary.outcome).toBe('stopped');

        // Every run: no workflow task failure, a small start input (the refusals it carried are capped).
        // Histories holding 1.5 MB signals are read over a connection that takes messages that large.
        const big = await Connection.connect({
          address: env('TEMPORAL_ADDRESS'),
          channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
        });
        const runs = await chainHistories(
          new Client({ connection: big, namespace: 'default' }),
          handle.workflowId,
          handle.firstExecutionRunId,
        ).finally(() => big.close());
        const facts = historyFacts(runs);
        const inputBytes = runs.map((r) =>
          (r.events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []).reduce(
            (n, p) => n + (p.data?.length ?? 0),
            0,
          ),
        );
        // A run's history is what it was sent plus a bounded rest: no refused payload is echoed into it.
        const perRun = runs.map((r) => {
          const total = r.events.reduce((n, e) => n + eventBytes(e), 0);
          const signalled = r.events.reduce((n, e) => n + signalBytes(e), 0);
          return {
            events: r.events.length,
            totalKB: Math.round(total / 1024),
            signalsKB: Math.round(signalled / 1024),
            ownKB: Math.round((total - signalled) / 1024),
          };
        });
        // The one workflow task failure allowed is the server's own: when too many signals arrive while a
        // task is running (about 2 MB or 100 events buffered — its accounting also counts what was already
        // buffered, so one 1.5 MB signal can tip it), it fails that task (FORCE_CLOSE_COMMAND), writes the
        // buffered signals and schedules a new task. Workflow code cannot cause that cause; any other is ours
        // (close races, UNHANDLED_COMMAND, are the server's too and not listed: test/kit/fault-checks.ts).
        const failures = facts.workflowTaskFailures.map((f) => {
          const run = runs.findIndex((r) => r.runId === f.runId);
          const events = runs[run]!.events;
          const i = events.findIndex((e) => String(e.eventId) === f.eventId);
          let flushed = 0;
          let flushedBytes = 0;
          for (
            let j = i + 1;
            j < events.length && events[j]!.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED;
            j++, flushed++
          )
            flushedBytes += eventBytes(events[j]!);
          const forcedFlush =
            f.cause === 'WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND' &&
            flushed >= 1 &&
            (flushedBytes >= LARGE_SIGNAL_BYTES || flushed >= SERVER_BUFFERED_EVENTS);
          // The other one: a task whose message passes gRPC's 4 MB — the worker's answer to a batch of
          // updates refused at validation (each refusal carries its 1.5 MB request back), or a history
          // holding megabytes of refused signals that a worker must read whole after losing its cache.
          // The task fails as GRPC_MESSAGE_TOO_LARGE and is retried, the updates are answered, the run goes
          // on (endsClean below). Only the protocol's size limit can cause that cause.
          const grpcLimit = f.cause === 'WORKFLOW_TASK_FAILED_CAUSE_GRPC_MESSAGE_TOO_LARGE' && figures.hugePayloads > 0;
          const serverBufferLimit = forcedFlush || grpcLimit;
          return {
            ...f,
            run,
            flushed,
            flushedKB: Math.round(flushedBytes / 1024),
            serverBufferLimit,
            around: events.slice(Math.max(0, i - 4), i + 3).map((e) => E[e.eventType ?? 0]),
          };
        });
        expect(runs.length).toBeGreaterThan(1);
        expect(failures.filter((f) => !f.serverBufferLimit)).toEqual([]);
        expect(facts.endsClean).toBe(true);
        expect(inputBytes.filter((b) => b > MAX_RUN_INPUT_BYTES)).toEqual([]);
        expect(perRun.filter((r) => r.ownKB * 1024 > MAX_RUN_OWN_HISTORY_BYTES)).toEqual([]);

        // The database holds exactly the decisions the workflow applied, once each, all storable; each
        // accepted update's decision among them.
        const stored = await listDecisions(h.pool, site);
        expect(stored.map((d) => d.decisionKey).sort()).toEqual([...facts.decisionKeys].sort());
        expect(new Set(facts.decisionKeys).size).toBe(facts.decisionKeys.length);
        for (const d of stored) expect(isWellFormed(d.who) && isWellFormed(d.why) && !hasRawControl(d.who)).toBe(true);
        const keys = new Set(stored.map((d) => d.decisionKey));
        expect(accepted.concat(stop).filter((r) => !keys.has(r.decisionKey))).toEqual([]);

        const row: Record<string, number> = {
          ...figures,
          runs: runs.length,
          decisionsApplied: stored.length,
          maxRunInputKB: Math.round(Math.max(...inputBytes) / 1024),
          maxRunEvents: Math.max(...perRun.map((r) => r.events)),
          maxRunHistoryKB: Math.max(...perRun.map((r) => r.totalKB)),
          maxRunOwnHistoryKB: Math.max(...perRun.map((r) => r.ownKB)),
          serverForcedTaskFailures: failures.length,
        };
        process.stderr.write(
          `[fuzz-decisions] seed ${SEED}: ${Object.entries(row)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}\n`,
        );
      });
    } catch (err) {
      throw new Error(
        `seed ${SEED} (TH_FUZZ_SEED=${SEED} replays it): ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    } finally {
      await connection.close();
    }
    expect(problems).toEqual([]);
    expect(figures.updatesAccepted + figures.updatesRefused + figures.updatesNotAllowed).toBe(figures.updates);
  },
  BUDGET_MS,
);
