/**
 * The CLI's line reader: however the bytes are chunked, the same lines come out; lines longer than the
 * limit are counted without being held (naming the field that made them long); invalid UTF-8 is named,
 * never decoded into U+FFFD.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { MAX_LINE_BYTES, readLines } from '../../../server/ingest/ingest-lines';
import type { BatchLine } from '../../../server/ingest/ingest-messages';
import { parseNdjsonLines } from '../../../server/ingest/ndjson-batch';
import { runs } from '../../kit/sizes';

async function linesOf(chunks: Array<Buffer | string>): Promise<BatchLine[]> {
  const out: BatchLine[] = [];
  for await (const chunk of readLines(Readable.from(chunks))) out.push(...chunk.lines);
  return out;
}

/** Splits `bytes` at the given offsets (sorted, deduplicated, inside the buffer). */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}

const lineText = fc
  .oneof(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.constantFrom('', '{"a":1}', 'ü😀', 'x\r', ' '))
  .map((s) => s.replace(/[\r\n]/g, ''));

test(
  'any chunking of a stream gives the lines of the whole (LF or CRLF, ' + 'multi-byte characters split across chunks)',
  async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineText, { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (lines, crlf, finalNewline, cuts) => {
          const text = lines.join(crlf ? '\r\n' : '\n') + (finalNewline ? '\n' : '');
          const expected = await linesOf([Buffer.from(text)]);
          expect(await linesOf(chunked(Buffer.from(text), cuts))).toEqual(expected);
          // The whole: the lines as written (a last empty line after the final newline is not a line).
          expect(expected).toEqual(finalNewline || lines.at(-1) !== '' ? lines : lines.slice(0, -1));
        },
      ),
      { numRuns: runs(500) },
    );
  },
);

test('a UTF-8 byte order mark at the start is not part of the first line', async () => {
  expect(await linesOf([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n{"b":2}')])).toEqual([
    '{"a":1}',
    '{"b":2}',
  ]);
  expect(await linesOf([Buffer.from('\ufeff{"a":1}\n')])).toEqual(['{"a":1}']);
});

test('invalid UTF-8 is named by line and byte, never replaced', async () => {
  const bad = Buffer.concat([Buffer.from('{"site":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  const input = Buffer.concat([
    Buffer.from('{"ok":1}\n'),
    bad,
    Buffer.from('\n{"ok":2}\n'),
    Buffer.from([0xc3]),
    Buffer.from('\n'),
  ]);
  const expected = [
    '{"ok":1}',
    { unreadable: 'not-utf8', bytes: bad.length, at: 10 },
    '{"ok":2}',
    { unreadable: 'not-utf8', bytes: 1, at: 0 },
  ];
  expect(await linesOf([input])).toEqual(expected);
  // A bad line straddling chunks, and a valid character split across them.
  expect(await linesOf(chunked(input, [3, 11, 12, 25]))).toEqual(expected);
});

test('a line over the limit is counted, not held, and its neighbours are intact', async () => {
  const big = 'x'.repeat(MAX_LINE_BYTES + 10);
  const limit = 'y'.repeat(MAX_LINE_BYTES);
  const input = Buffer.from(`first\n${big}\n${limit}\r\n${limit}z\nlast`);
  const expected = [
    'first',
    { unreadable: 'too-long', bytes: big.length },
    limit,
    { unreadable: 'too-long', bytes: MAX_LINE_BYTES + 1 },
    'last',
  ];
  expect(await linesOf([input])).toEqual(expected);
  expect(
    await linesOf(
      chunked(
        input,
        Array.from({ length: 40 }, (_, i) => i * 65_536 + 7),
      ),
    ),
  ).toEqual(expected);
});

test('an endless line without a newline keeps memory flat (parts are dropped past the limit)', async () => {
  // 64 MB of one line in 1 MB chunks: were the bytes held, the heap would grow by 64 MB.
  const chunk = Buffer.alloc(1 << 20, 0x61);
  function* source(): Generator<Buffer> {
    for (let i = 0; i < 64; i++) yield chunk;
  }
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  const lines: BatchLine[] = [];
  for await (const c of readLines(Readable.from(source()))) {
    lines.push(...c.lines);
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
  }
  expect(lines).toEqual([{ unreadable: 'too-long', bytes: 64 << 20 }]);
  expect(peak - before).toBeLessThan(16 << 20);
});

test('a line over the limit names the field holding most of it, however it is chunked', async () => {
  const event = (fields: Record<string, unknown>) =>
    JSON.stringify({ ts: 1, site: 'shop.example.com', status: 200, latencyMs: 1, ...fields });
  const headers = event({ headers: { 'x-big': 'h'.repeat(MAX_LINE_BYTES) }, bodySample: 'short' });
  const body = event({ title: 't', bodySample: 'b'.repeat(MAX_LINE_BYTES) });
  // Quotes, escapes and braces inside strings are not structure.
  const tricky = event({ title: '"{[,:\\', outcomeReason: `x"},"fake":"${'q'.repeat(MAX_LINE_BYTES)}` });
  const input = Buffer.from(`${headers}\n${body}\n${tricky}\nnot json ${'n'.repeat(MAX_LINE_BYTES)}\nlast`);
  const expected = [
    {
      unreadable: 'too-long',
      bytes: Buffer.byteLength(headers),
      largest: { name: 'headers', bytes: Buffer.byteLength(JSON.stringify({ 'x-big': 'h'.repeat(MAX_LINE_BYTES) })) },
    },
    {
      unreadable: 'too-long',
      bytes: Buffer.byteLength(body),
      largest: { name: 'bodySample', bytes: MAX_LINE_BYTES + 2 },
    },
    {
      unreadable: 'too-long',
      bytes: Buffer.byteLength(tricky),
      largest: { name: 'outcomeReason', bytes: expect.any(Number) },
    },
    { unreadable: 'too-long', bytes: MAX_LINE_BYTES + 9 },
    'last',
  ];
  expect(await linesOf([input])).toEqual(expected);
  expect(
    await linesOf(
      chunked(
        input,
        Array.from({ length: 80 }, (_, i) => i * 65_536 + 13),
      ),
    ),
  ).toEqual(expected);
  // The messages name it (parseNdjsonLines, as `target-health ingest` and POST /v1/events answer).
  const errors = parseNdjsonLines(await linesOf([input]), 1).rejected.map((r) => r.errors[0]);
  expect(errors[0]).toMatch(
    /^longer than 1,048,576 bytes \([\d,]+\): headers holds [\d,]+ bytes of it; send headers shorter/,
  );
  expect(errors[1]).toMatch(
    /^longer than 1,048,576 bytes \([\d,]+\): bodySample holds 1,048,578 bytes of it; cut bodySample to 64 KB/,
  );
  expect(errors[2]).toMatch(/: outcomeReason holds /);
  expect(errors[3]).toMatch(/^longer than 1,048,576 bytes \([\d,]+\); each line must be one event/);
});
