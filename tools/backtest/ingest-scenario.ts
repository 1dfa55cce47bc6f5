/**
 * Loads a scenario's events into a scratch database through the product's own ingest path — the code
 * `target-health ingest` runs (server/ingest/ingest-stream.ts: worker threads that parse, validate, classify
 * and store) — so the classifier is part of what the backtest measures. When the scenario has to move
 * in time (tools/backtest/time-shift.ts), each line's `ts` is rewritten on the way in.
 *
 * A scenario's events must all be valid: a rejected line stops the backtest (exit 2) with the file,
 * line and field, because a scorecard over silently thinned traffic would mislead.
 */
import { createReadStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { isUtf8 } from 'node:buffer';
import { UserError } from '../../core/common/user-error';
import { ingestStream, type StreamIngestSummary } from '../../server/ingest/ingest-stream';
import { MAX_LINE_BYTES } from '../../server/ingest/ingest-lines';
import { shiftEventLine } from './time-shift';

/** As `target-health ingest`: one worker thread per core, at least two, at most four. */
const INGEST_WORKERS = Math.min(4, Math.max(2, availableParallelism()));
const BATCH_SIZE = 10_000;
const LF = 10;

/**
 * Rewrites each line's `ts` by `ms`. Lines that are not valid UTF-8, too long, or hold no valid event
 * pass through byte for byte, so ingest reports them exactly as it would have.
 */
class ShiftLines extends Transform {
  private rest: Buffer = Buffer.alloc(0);

  constructor(private readonly ms: number) {
    super();
  }

  private line(bytes: Buffer): Buffer {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    const body = bytes.subarray(0, end);
    if (body.length === 0 || body.length > MAX_LINE_BYTES || !isUtf8(body)) return bytes;
    const text = body.toString('utf8');
    const shifted = shiftEventLine(text, this.ms);
    return shifted === text ? bytes : Buffer.from(shifted, 'utf8');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const data = this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk;
    let start = 0;
    const out: Buffer[] = [];
    for (let i = data.indexOf(LF, start); i >= 0; i = data.indexOf(LF, start)) {
      out.push(this.line(data.subarray(start, i)), Buffer.from([LF]));
      start = i + 1;
    }
    this.rest = Buffer.from(data.subarray(start));
    done(null, out.length > 0 ? Buffer.concat(out) : undefined);
  }

  override _flush(done: TransformCallback): void {
    done(null, this.rest.length > 0 ? this.line(this.rest) : undefined);
  }
}

export interface ScenarioIngest {
  summary: StreamIngestSummary;
}

/** Ingests `eventsPath` into the database at `databaseUrl`, its times moved by `shiftMs`. */
export async function ingestScenarioEvents(
  eventsPath: string,
  databaseUrl: string,
  shiftMs: number,
): Promise<StreamIngestSummary> {
  const file = createReadStream(eventsPath, { highWaterMark: 1 << 20 });
  const input: Readable = shiftMs === 0 ? file : file.pipe(new ShiftLines(shiftMs));
  // A read error on the file itself (not a line) ends the stream with an error: say which file.
  let readError: NodeJS.ErrnoException | undefined;
  file.on('error', (err) => {
    readError = err;
    if (input !== file) input.destroy(err);
  });
  let firstRejected: string | undefined;
  let summary: StreamIngestSummary;
  try {
    summary = await ingestStream(input, {
      databaseUrl,
      batchSize: BATCH_SIZE,
      workers: INGEST_WORKERS,
      onRejected: (r) => {
        firstRejected ??= `line ${r.line}: ${r.errors.join('; ').replace(/^line \d+: /, '')}`;
      },
    });
  } catch (err) {
    if (readError !== undefined && !(err instanceof UserError))
      throw new UserError(`${eventsPath}: cannot read (${readError.code ?? readError.message})`);
    throw err;
  }
  if (summary.rejected > 0) {
    const more = summary.rejected > 1 ? ` (and ${summary.rejected - 1} more rejected lines)` : '';
    throw new UserError(
      `${eventsPath} ${firstRejected ?? 'some lines were rejected'}${more}; a scenario's events must all be valid`,
    );
  }
  return summary;
}
