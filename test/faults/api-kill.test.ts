/**
 * The HTTP API SIGKILLed mid-batch, then restarted; the crawler resends what was not acknowledged — the
 * recovery docs/api.md documents ("a client that retries a batch after a timeout stores each event once").
 *
 * A client posts numbered events in batches of 1,000 to `target-health api` (a real process, with its
 * ingest threads). While a batch is in flight the process is SIGKILLed; the batch gets no answer, so the
 * client keeps it, waits for the restarted server and sends it again, then carries on. Half of the events
 * have no `eventId` (the store derives one from their content). Afterwards every event is stored exactly
 * once, and every acknowledged batch was stored before its answer. CI form: two kills, 12,000 events;
 * full form (TH_FAULTS_FULL=1): five kills, 60,000 events.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createToken } from '../../server/api/tokens';
import { printFigures } from '../kit/fault-checks';
import { countStored, numberedEventLines, storedNumbers } from '../kit/fault-events';
import { Child, FULL, startFaultDatabase, type FaultDatabase } from '../kit/fault-stack';
import { freePort } from '../../stack/free-port';
import { CLI } from '../kit/processes';

const EVENTS = FULL ? 60_000 : 12_000;
const KILLS = FULL ? 5 : 2;
const BATCH = 1_000;

let db: FaultDatabase;
beforeAll(async () => {
  db = await startFaultDatabase('api');
}, 300_000);
afterAll(async () => db?.close(), 120_000);

/** `target-health api` on `port`, ready once it says where it listens. */
async function startApi(port: number): Promise<Child> {
  const child = new Child(
    spawn(process.execPath, [CLI, 'api', '--port', String(port)], { env: db.env(), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  await child.waitForOutput(/listening on http:\/\//, 'the API to listen', 60_000);
  return child;
}

test(
  'the API SIGKILLed mid-batch and restarted: ' + 'every event stored exactly once, nothing acknowledged lost',
  async () => {
    const site = `api-kill-${randomUUID().slice(0, 8)}.example.com`;
    const lines = numberedEventLines(site, EVENTS);
    const { token } = await createToken(db.pool, `fault-${randomUUID().slice(0, 8)}`, ['ingest']);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v1/events`;
    let api = await startApi(port);

    const post = (batch: number) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
        body: lines.slice(batch * BATCH, (batch + 1) * BATCH).join('\n') + '\n',
      });

    const figures: Array<Record<string, string | number>> = [];
    let kills = 0;
    let acknowledged = 0;
    let resent = 0;
    const batches = EVENTS / BATCH;
    for (let batch = 0; batch < batches;) {
      // Kill while this batch is in flight, once a few batches went through since the last kill.
      const killNow = kills < KILLS && batch >= (kills + 1) * Math.floor(batches / (KILLS + 1));
      const answer = post(batch).then(
        async (r) => ({
          ok: r.ok,
          status: r.status,
          body: (await r.json()) as { inserted?: number; duplicates?: number },
        }),
        (err: unknown) => ({ ok: false, status: 0, body: { error: String(err) } }),
      );
      if (killNow) {
        // The body is on its way; let the server start on it (a batch takes tens of milliseconds), then
        // kill it. Whether the kill lands before, during or (rarely) after the store, the client has no
        // answer in the first two cases and must send the batch again.
        await new Promise((r) => setTimeout(r, 15));
        const before = await countStored(db.pool, site);
        await api.kill('SIGKILL');
        kills += 1;
        const result = await answer;
        const after = await storedNumbers(db.pool, site, EVENTS);
        expect(after.doubled).toEqual([]);
        figures.push({
          kill: kills,
          'batch in flight': batch,
          answered: result.ok ? 'yes (landed after the answer)' : 'no',
          'stored at kill': before,
          'stored after': after.rows,
        });
        api = await startApi(port);
        if (result.ok) {
          acknowledged += 1;
          batch += 1;
        } else resent += 1;
        // An unanswered batch is sent again (the same loop iteration), as a crawler retries it.
        continue;
      }
      const result = await answer;
      expect({ batch, status: result.status }).toEqual({ batch, status: 200 });
      // Acknowledged means stored: the answer comes after the commit.
      expect(await countStored(db.pool, site)).toBeGreaterThanOrEqual((batch + 1) * BATCH);
      acknowledged += 1;
      batch += 1;
    }
    await api.kill('SIGTERM');

    const stored = await storedNumbers(db.pool, site, EVENTS);
    printFigures(`API SIGKILL (${FULL ? 'full' : 'CI'} form): kills`, figures);
    printFigures('API SIGKILL: events', [
      {
        sent: EVENTS,
        'batches acknowledged': acknowledged,
        'batches resent': resent,
        stored: stored.distinct,
        rows: stored.rows,
        lost: stored.missing.length,
        doubled: stored.doubled.length,
      },
    ]);
    expect(kills).toBe(KILLS);
    expect(stored.missing).toEqual([]);
    expect(stored.doubled).toEqual([]);
    expect(stored.rows).toBe(EVENTS);
  },
  900_000,
);
