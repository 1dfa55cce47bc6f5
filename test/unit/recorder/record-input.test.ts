/**
 * record()'s input: undefined header values are left out without touching the crawler's object; recordWithId; refusals
 * logged without onRejected.
 */
import { createRecorder } from '../../../server/compat/recorder';
import { withoutUndefinedHeaders } from '@target-health/crawler/recorder/record-input';
import { parseEvent } from '@target-health/crawler/events';
import { captureLogger, ok } from './helpers';

const base = { ts: 1_700_000_000_000, site: 'a.example.com', status: 200, latencyMs: 5 };

test(
  'an undefined header value (or list entry) is left out: the event parses; the original is unchanged; a clean ' +
    'event is not copied',
  () => {
    const headers = { Server: 'cloudflare', 'cf-mitigated': undefined, 'set-cookie': ['a=1', undefined, 'b=2'] };
    const event = { ...base, headers };
    expect(parseEvent(event).ok).toBe(false);
    const clean = withoutUndefinedHeaders(event);
    expect(clean).not.toBe(event);
    expect(event.headers).toBe(headers);
    expect('cf-mitigated' in headers).toBe(true);
    expect({ ...clean.headers }).toEqual({ Server: 'cloudflare', 'set-cookie': ['a=1', 'b=2'] });
    const parsed = parseEvent(clean);
    expect(parsed.ok && { ...parsed.event.headers }).toEqual({ server: 'cloudflare', 'set-cookie': 'a=1\nb=2' });
    const tidy = { ...base, headers: { server: 'x' } };
    expect(withoutUndefinedHeaders(tidy)).toBe(tidy);
    expect(withoutUndefinedHeaders(base)).toBe(base);
  },
);

test(
  'recordWithId answers the id the row is stored under (its own eventId, or the one given), and kept/slowDown ' +
    'like record()',
  async () => {
    const ids: string[] = [];
    const recorder = createRecorder({
      sink: { write: ({ events, eventIds }) => (ids.push(...eventIds), Promise.resolve(ok(events.length))) },
      highWaterMark: 2,
      maxBuffered: 3,
      logger: captureLogger().logger,
    });
    const own = recorder.recordWithId({ ...base, eventId: 'mine-7' });
    const given = recorder.recordWithId({ ...base, headers: { server: 'x', via: undefined } });
    const full = recorder.recordWithId(base);
    const dropped = recorder.recordWithId(base);
    expect(own).toEqual({ id: 'mine-7', kept: true, slowDown: false });
    expect(given).toMatchObject({ kept: true, slowDown: true });
    expect(full).toMatchObject({ kept: true, slowDown: true });
    expect(dropped).toMatchObject({ kept: false, slowDown: true });
    await recorder.close();
    expect(ids).toEqual(['mine-7', given.id, full.id]);
    expect(recorder.stats()).toMatchObject({ recorded: 3, stored: 3, dropped: 1 });
  },
);

test(
  'refused events without onRejected are not silent: ' + 'counted and logged with the first error and its event id',
  async () => {
    const { logger, lines } = captureLogger();
    const recorder = createRecorder({
      sink: {
        write: ({ events }) =>
          Promise.resolve({
            ...ok(events.length - 1),
            rejected: [{ line: 2, errors: ['status: must be an HTTP status code'] }],
          }),
      },
      logger,
    });
    recorder.record(base);
    const { id } = recorder.recordWithId({ ...base, status: 99 });
    await recorder.close();
    expect(recorder.stats()).toMatchObject({ stored: 1, rejected: 1 });
    const line = lines.find((l) => l.message.startsWith('recorder: the store refused 1 invalid events'));
    expect(line).toMatchObject({
      level: 'warn',
      fields: { rejected: 1, firstError: 'status: must be an HTTP status code', firstEventId: id },
    });
  },
);
