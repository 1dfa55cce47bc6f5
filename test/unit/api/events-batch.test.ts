/**
 * The pure parts of `POST /v1/events`: the metric label of a rejection (bounded: a crawler's own field
 * names never become series), the media-type and encoding checks, and the JSON-array decoding.
 */
import { decodeJsonArray, decodeNdjsonLines, rejectionField } from '../../../server/api/events-batch';
import { BodyError, mediaTypeOf, requireEncoding, requireMediaType } from '../../../server/api/request-body';
import { parseBatch } from '../../../server/db/signal-store/ingest';
import { parseNdjsonLines } from '../../../server/ingest/ndjson-batch';

describe('rejectionField', () => {
  test('labels the messages the parsers really produce by the field they name', () => {
    const now = Date.now();
    const inputs: unknown[] = [
      { ts: 'x', site: 'a.example.com', status: 200, latencyMs: 1 },
      { ts: now, site: 'a.example.com', status: 200, latencyMs: 1, route: { country: 'Germany' } },
      { ts: now, site: 'a.example.com', status: 200, latencyMs: 1, statusCode: 200, 'évil-key-1': 1 },
      { ts: now - 90 * 86_400_000, site: 'a.example.com', status: 200, latencyMs: 1 },
      [1, 2],
    ];
    const labels = parseBatch(inputs, 0, undefined, { now }).rejected.map((r) => r.errors.map(rejectionField));
    expect(labels).toEqual([['ts'], ['route'], ['unknown_field', 'unknown_field'], ['ts'], ['event']]);
    const lines = parseNdjsonLines(
      ['{"ts": ', { unreadable: 'too-long', bytes: 2 << 20 }, { unreadable: 'not-utf8', bytes: 10, at: 3 }],
      0,
      { now },
    );
    expect(lines.rejected.map((r) => r.errors.map(rejectionField))).toEqual([['json'], ['line_length'], ['utf8']]);
  });

  test('anything else is a fixed label, never the text of the message', () => {
    expect(
      rejectionField(
        'the database refused this event (value too long; SQLSTATE 22001); the other events of its batch are stored',
      ),
    ).toBe('database');
    expect(rejectionField('something: nobody expected')).toBe('other');
    expect(rejectionField('no colon at all')).toBe('other');
  });
});

describe('media types and encodings', () => {
  test('parameters and case do not matter; others are a 415 naming the accepted ones', () => {
    expect(mediaTypeOf('Application/JSON; charset=utf-8')).toBe('application/json');
    expect(requireMediaType('application/x-ndjson; charset=UTF-8', ['application/x-ndjson', 'application/json'])).toBe(
      'application/x-ndjson',
    );
    const err = (() => {
      try {
        requireMediaType('text/csv', ['application/x-ndjson', 'application/json']);
      } catch (e) {
        return e as BodyError;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(BodyError);
    expect([err!.statusCode, err!.message]).toEqual([
      415,
      'Content-Type text/csv is not accepted here; send application/x-ndjson or application/json',
    ]);
    expect(requireEncoding(undefined)).toBe('identity');
    expect(requireEncoding('GZIP')).toBe('gzip');
    expect(() => requireEncoding('deflate')).toThrow(
      'Content-Encoding deflate is not accepted; send the body as is or with Content-Encoding: gzip',
    );
  });
});

describe('decoding', () => {
  test('a JSON array (a byte order mark tolerated); anything else is a 400 naming the fix', () => {
    expect(decodeJsonArray(Buffer.from('\uFEFF[{"a":1}]'))).toEqual([{ a: 1 }]);
    expect(() => decodeJsonArray(Buffer.from('"x"'))).toThrow(
      'body: must be a JSON array of events (got "x"); wrap a single event in [ ]',
    );
    expect(() => decodeJsonArray(Buffer.from([0x5b, 0xff, 0x5d]))).toThrow(
      'body: not valid UTF-8; send the events as UTF-8 JSON',
    );
  });

  test('NDJSON lines split as the CLI splits a file: CRLF, no phantom last line, bad UTF-8 by line', async () => {
    const body = Buffer.concat([
      Buffer.from('{"a":1}\r\n\n'),
      Buffer.from([0x7b, 0xc3, 0x28, 0x7d]),
      Buffer.from('\n{"b":2}\n'),
    ]);
    expect(await decodeNdjsonLines(body)).toEqual([
      '{"a":1}',
      '',
      { unreadable: 'not-utf8', bytes: 4, at: 1 },
      '{"b":2}',
    ]);
  });
});
