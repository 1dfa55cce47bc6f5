/**
 * The worker's SDK logs on pino: an activity's failure is logged with its message, type and causes, not
 * as `"error":{}`. The SDK logs it as `warn('Activity failed', { error, durationMs })`
 * (node_modules/@temporalio/worker/lib/activity.js); this calls the adapter the worker installs the same way.
 */
import { Writable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { createLogger } from '../../../server/logging/logger';
import { sdkLogger } from '../../../server/logging/temporal-logger';

function capture(): { lines: Array<Record<string, unknown>>; stream: Writable } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

describe("the worker's SDK logger", () => {
  test('an activity failure is logged with its message, type, Temporal failure type and cause', async () => {
    const { lines, stream } = capture();
    const logger = sdkLogger(createLogger('info', 'worker', stream));
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const failure = ApplicationFailure.create({
      message: 'webhook https://hooks.example/x answered 503',
      type: 'WebhookUnavailable',
      cause,
    });
    logger.warn('Activity failed', { error: failure, durationMs: 12, activityType: 'deliverNotification' });
    logger.warn('Activity failed', { error: new TypeError('rows is not iterable'), durationMs: 3 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(2);
    const [first, second] = lines as [Record<string, unknown>, Record<string, unknown>];
    expect(first).toMatchObject({
      level: 40,
      msg: 'Activity failed',
      durationMs: 12,
      activityType: 'deliverNotification',
      error: {
        type: 'ApplicationFailure',
        failureType: 'WebhookUnavailable',
        message: 'webhook https://hooks.example/x answered 503',
        cause: { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' },
      },
    });
    expect(String((first.error as { stack: unknown }).stack)).toContain('ApplicationFailure');
    expect(second.error).toMatchObject({ type: 'TypeError', message: 'rows is not iterable' });
    expect(second.error).not.toHaveProperty('failureType');
  });

  test('our own `err` fields keep their causes too; a field that is no error is written as it is', async () => {
    const { lines, stream } = capture();
    const logger = createLogger('info', 'worker', stream);
    logger.error({ err: new Error('tick failed', { cause: new RangeError('bad bucket') }) }, 'failed');
    logger.info({ error: 'a string' }, 'plain');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[0]).toMatchObject({
      err: { type: 'Error', message: 'tick failed', cause: { type: 'RangeError', message: 'bad bucket' } },
    });
    expect(lines[1]).toMatchObject({ error: 'a string' });
  });
});
