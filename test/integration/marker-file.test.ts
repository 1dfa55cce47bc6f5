/**
 * A deployment's marker file (TARGET_HEALTH_MARKERS) at ingest, on the real PostgreSQL: an event ingested
 * after the file changes is classified by the new marker without a restart; a bad new file is refused
 * (logged with the field) and the previous markers stay in use.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createIngester } from '../../server/db/signal-store';
import { createPool, type Pool } from '../../server/db/pool';
import { watchMarkerFile, type CatalogueSource } from '../../server/config/marker-catalogue';
import { createLogger } from '../../server/logging/logger';
import { env } from '../kit/services';

let pool: Pool;
let dir: string;
let source: CatalogueSource | undefined;
beforeAll(() => {
  pool = createPool(env('DATABASE_URL'), 2);
  dir = mkdtempSync(join(env('TH_TEST_DIR'), 'markers-'));
});
afterEach(() => source?.close());
afterAll(async () => pool.end());

const SHOP_WALL = {
  id: 'shop-wall',
  vendor: 'Example Shop',
  kind: 'block',
  bodyAny: ['our shop has paused your visits'],
};
const page =
  '<html><head><title>Example Shop</title></head><body><p>Our shop has paused your visits for a ' +
  'while.</p></body></html>';

function keptLogger() {
  const lines: Array<{ msg?: string; [field: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as { msg?: string });
      done();
    },
  });
  return { lines, logger: createLogger('info', 'test', stream) };
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function storedOutcome(
  site: string,
  eventId: string,
): Promise<{ outcome: string; rule: string; marker_id: string | null }> {
  const { rows } = await pool.query<{ outcome: string; rule: string; marker_id: string | null }>(
    'SELECT outcome, rule, marker_id FROM request_events WHERE site = $1 AND event_id = $2',
    [site, eventId],
  );
  return rows[0]!;
}

test(
  'an event ingested after the file changes is classified by the new marker; ' + 'a bad file keeps the old one',
  async () => {
    const site = `markers-${randomUUID().slice(0, 8)}.example.com`;
    const file = join(dir, 'markers.json');
    writeFileSync(file, JSON.stringify({ version: 1, markers: [] }));
    const { lines, logger } = keptLogger();
    source = watchMarkerFile(file, { logger, pollMs: 50, debounceMs: 50 });
    const ingester = createIngester(pool, { catalogue: source.current });
    const event = (eventId: string) => ({
      ts: Date.now(),
      site,
      eventId,
      status: 200,
      latencyMs: 80,
      bytes: page.length,
      bodySample: page,
    });

    // Before: the shop's wall is an ordinary 200 (no marker knows it), and the classifier is cached.
    expect((await ingester.ingest([event('before')])).inserted).toBe(1);
    expect(await storedOutcome(site, 'before')).toEqual({ outcome: 'ok', rule: 'status', marker_id: null });

    const first = source.current();
    writeFileSync(file, JSON.stringify({ version: 1, markers: [SHOP_WALL] }));
    await until('the new file to be read', () => source!.current() !== first);
    expect((await ingester.ingest([event('after')])).inserted).toBe(1);
    expect(await storedOutcome(site, 'after')).toEqual({
      outcome: 'soft_block',
      rule: 'block_marker',
      marker_id: 'shop-wall',
    });

    // A bad file: refused with the field named, logged; the shop-wall markers stay.
    const good = source.current();
    writeFileSync(file, JSON.stringify({ version: 1, markers: [{ ...SHOP_WALL, bodyRegex: '(a+)+$' }] }));
    await until('the bad file to be refused', () =>
      lines.some((l) => l.msg?.startsWith('marker file refused') === true),
    );
    expect(source.current()).toBe(good);
    const refusal = lines.find((l) => l.msg?.startsWith('marker file refused') === true)!;
    expect(refusal).toMatchObject({ level: 50, markerFile: file });
    expect(refusal.msg).toMatch(/markers\[0\]\.bodyRegex: has a quantified group containing a quantifier/);
    expect((await ingester.ingest([event('bad-file')])).inserted).toBe(1);
    expect(await storedOutcome(site, 'bad-file')).toEqual({
      outcome: 'soft_block',
      rule: 'block_marker',
      marker_id: 'shop-wall',
    });

    // Disabling it again: back to ok.
    writeFileSync(file, JSON.stringify({ version: 1, markers: [] }));
    await until('the emptied file to be read', () => source!.current() !== good);
    expect((await ingester.ingest([event('removed')])).inserted).toBe(1);
    expect((await storedOutcome(site, 'removed')).outcome).toBe('ok');
  },
);

test('a bad file at the start is one line naming the variable, the file and the field', () => {
  const file = join(dir, 'bad.json');
  writeFileSync(file, JSON.stringify({ version: 1, markers: [{ ...SHOP_WALL, colour: 'red' }] }));
  const { logger } = keptLogger();
  expect(() => watchMarkerFile(file, { logger })).toThrow(
    `TARGET_HEALTH_MARKERS: ${file}: markers[0].colour: unknown field`,
  );
});
