/**
 * The package's own SSE parser (packages/crawler/src/controls/sse-parser.ts), on the cases of the HTML
 * standard's event stream interpretation that the controls stream relies on, and on chunks split anywhere.
 */
import { createSseParser, type SseMessage } from '@target-health/crawler/controls/sse-parser';

function parse(chunks: readonly string[]): { events: SseMessage[]; retries: number[] } {
  const events: SseMessage[] = [];
  const retries: number[] = [];
  const parser = createSseParser({ onEvent: (m) => events.push(m), onRetry: (ms) => retries.push(ms) });
  for (const chunk of chunks) parser.feed(chunk);
  return { events, retries };
}

/** Every way of cutting the text into two chunks gives the same result as one chunk. */
function everySplit(text: string): Array<{ events: SseMessage[]; retries: number[] }> {
  const results = [parse([text])];
  for (let i = 1; i < text.length; i++) results.push(parse([text.slice(0, i), text.slice(i)]));
  return results;
}

test('event, data and id fields make one message at the blank line', () => {
  expect(parse(['event: snapshot\nid: 7\ndata: {"sites":[]}\n\n']).events).toEqual([
    { event: 'snapshot', data: '{"sites":[]}', id: '7' },
  ]);
});

test('several data lines join with a newline; a trailing newline is not part of the data', () => {
  expect(parse(['data: one\ndata: two\ndata:\ndata: four\n\n']).events).toEqual([
    { event: undefined, data: 'one\ntwo\n\nfour', id: undefined },
  ]);
});

test('only one space after the colon is dropped; a line without a colon is a field with an empty value', () => {
  expect(parse(['data:  two spaces\n\n', 'data\n\n', 'data:no-space\n\n']).events.map((e) => e.data)).toEqual([
    ' two spaces',
    '',
    'no-space',
  ]);
});

test('the last event id carries over to later messages until a new id: sets it; an id with NULL is ignored', () => {
  const { events } = parse(['id: a\ndata: 1\n\n', 'data: 2\n\n', 'id: b\0c\ndata: 3\n\n', 'id:\ndata: 4\n\n']);
  expect(events.map((e) => e.id)).toEqual(['a', 'a', 'a', '']);
});

test('the event type resets after each message', () => {
  expect(parse(['event: controls\ndata: x\n\ndata: y\n\n']).events.map((e) => e.event)).toEqual([
    'controls',
    undefined,
  ]);
});

test('retry: takes whole milliseconds only', () => {
  expect(parse(['retry: 2500\n', 'retry: 1.5\n', 'retry: -1\n', 'retry: 10s\n', 'retry:300\n\n']).retries).toEqual([
    2500, 300,
  ]);
});

test('comments (the heartbeat) and unknown fields are ignored; a block without data sets no event off', () => {
  const { events } = parse([': heartbeat\n\n', 'foo: bar\n\n', 'id: 9\n\n', 'event: controls\n\n', 'data: after\n\n']);
  expect(events).toEqual([{ event: undefined, data: 'after', id: '9' }]);
});

test('CRLF, CR and LF all end lines, also mixed', () => {
  const expected = [
    { event: 'controls', data: 'a\nb', id: '1' },
    { event: undefined, data: 'c', id: '1' },
  ];
  expect(parse(['event: controls\r\nid: 1\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n']).events).toEqual(expected);
  expect(parse(['event: controls\rid: 1\rdata: a\rdata: b\r\rdata: c\r\r']).events).toEqual(expected);
  expect(parse(['event: controls\nid: 1\r\ndata: a\rdata: b\n\r\ndata: c\n\n']).events).toEqual(expected);
});

test('a chunk boundary anywhere — inside a field, between CR and LF — changes nothing', () => {
  const text = 'retry: 1000\r\nevent: snapshot\r\nid: 42\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: hb\r\n\r\ndata: z\n\n';
  const results = everySplit(text);
  for (const r of results) expect(r).toEqual(results[0]);
  expect(results[0]!.events).toEqual([
    { event: 'snapshot', data: '{"a":\n1}', id: '42' },
    { event: undefined, data: 'z', id: '42' },
  ]);
  expect(results[0]!.retries).toEqual([1000]);
});

test('a CR at the end of a chunk followed by a blank line is two line ends, not one', () => {
  expect(parse(['data: x\r', '\r']).events).toEqual([{ event: undefined, data: 'x', id: undefined }]);
  expect(parse(['data: x\r', '\n']).events).toEqual([]);
  expect(parse(['data: x\r', '\n', '\n']).events).toHaveLength(1);
});

test('an unfinished message is not dispatched, and reset() forgets it', () => {
  const events: SseMessage[] = [];
  const parser = createSseParser({ onEvent: (m) => events.push(m) });
  parser.feed('id: 5\ndata: half');
  expect(events).toEqual([]);
  parser.reset();
  parser.feed('\ndata: whole\n\n');
  expect(events).toEqual([{ event: undefined, data: 'whole', id: '5' }]);
});
