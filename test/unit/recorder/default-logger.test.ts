/** The recorder's default logger: pino-shaped JSON lines on stderr, written by the package (no pino). */
import fs from 'node:fs';
import { defaultRecorderLogger } from '@target-health/crawler/recorder/report';

afterEach(() => jest.restoreAllMocks());

test('writes one JSON line per call to stderr, synchronously, with pino’s level numbers and msg', () => {
  const written: Array<[unknown, string]> = [];
  jest.spyOn(fs, 'writeSync').mockImplementation((fd: number, text: string) => {
    written.push([fd, text]);
    return text.length;
  });
  const log = defaultRecorderLogger();
  log.info({ buffered: 3 }, 'one');
  log.warn({}, 'two');
  log.error({ err: 'ECONNREFUSED' }, 'three');
  expect(written.map(([fd]) => fd)).toEqual([2, 2, 2]);
  expect(written.every(([, text]) => text.endsWith('\n') && !text.slice(0, -1).includes('\n'))).toBe(true);
  const lines = written.map(([, text]) => JSON.parse(text) as Record<string, unknown>);
  expect(lines.map((l) => [l.level, l.msg, l.name])).toEqual([
    [30, 'one', 'target-health-recorder'],
    [40, 'two', 'target-health-recorder'],
    [50, 'three', 'target-health-recorder'],
  ]);
  expect(lines[0]).toMatchObject({ buffered: 3, pid: process.pid });
  expect(typeof lines[0]!.time).toBe('number');
});

test('a field JSON cannot hold, or a closed stderr, does not throw', () => {
  const written: string[] = [];
  jest.spyOn(fs, 'writeSync').mockImplementationOnce((_fd: number, text: string) => {
    written.push(text);
    return text.length;
  });
  const log = defaultRecorderLogger();
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  expect(() => log.warn({ cyclic }, 'still logged')).not.toThrow();
  expect(JSON.parse(written[0]!)).toMatchObject({ level: 40, msg: 'still logged' });
  jest.spyOn(fs, 'writeSync').mockImplementation(() => {
    throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
  });
  expect(() => log.info({}, 'lost')).not.toThrow();
});
