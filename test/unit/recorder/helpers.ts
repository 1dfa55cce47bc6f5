/** Collaborators of the recorder's unit tests: in-memory sinks and a logger that keeps its lines. */
import type { EventSink, RecordedBatch, RecorderStats, RecordInput } from '../../../server/compat/recorder';
import type { RecorderLogger } from '@target-health/crawler/recorder/report';
import type { IngestResult } from '../../../server/db/signal-store/types';

export const ok = (n: number): IngestResult => ({ accepted: n, inserted: n, duplicates: 0, rejected: [] });

export const ev = (i: number): RecordInput => ({
  ts: 1_700_000_000_000 + i,
  site: 'a.example.com',
  status: 200,
  latencyMs: 1,
  bytes: i,
});

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

export function captureLogger(): { logger: RecorderLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, fields, message });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

/**
 * A store in memory that keeps each id once (like the signal store's unique index) and can be switched
 * down: while down, writes fail like a lost connection.
 */
export function memoryStore() {
  const stored = new Map<string, Record<string, unknown>>();
  let down = false;
  let writes = 0;
  const sink: EventSink = {
    write: ({ events, eventIds }: RecordedBatch) => {
      writes += 1;
      if (down)
        return Promise.reject(
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        );
      let inserted = 0;
      events.forEach((e, i) => {
        const id = eventIds[i]!;
        if (!stored.has(id)) {
          stored.set(id, e);
          inserted += 1;
        }
      });
      return Promise.resolve({ accepted: events.length, inserted, duplicates: events.length - inserted, rejected: [] });
    },
  };
  return {
    sink,
    stored,
    get writes() {
      return writes;
    },
    setDown(value: boolean) {
      down = value;
    },
  };
}

/** What every recorder promises at any moment: each event recorded is accounted for exactly once. */
export function expectAccounted(s: RecorderStats): void {
  expect(s.recorded + s.recovered).toBe(s.stored + s.duplicates + s.rejected + s.failed + s.buffered + s.spilled);
}

/** Waits (real timers) until `cond` holds; fails naming `what` after timeoutMs. */
export async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
