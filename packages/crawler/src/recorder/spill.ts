/**
 * The recorder's spill: events that do not fit in memory wait on disk, in a directory the crawler names,
 * until the store takes them — across restarts of the crawler.
 *
 * - Segment files `<12-digit sequence>.ndjson`, appended in order, one JSON line per event:
 *   `{"id":"<event id>","event":{…}}`. JSON escapes newlines inside strings, so a line is an event.
 * - A segment is sealed (no more appends) at SEGMENT_BYTES or when replay takes it; replay takes sealed
 *   segments oldest first and deletes one once every event in it is settled (stored or counted failed).
 * - Crash-safe: what was written survives the crawler's process (it is in the OS's page cache; a machine
 *   crash can lose the last unsynced writes: segments are fsynced when sealed). A crash between storing a
 *   segment and deleting it sends it again; the events keep their ids, so the store ignores the repeats.
 *   A crash in the middle of an append can leave a torn last line: replay reports it as unreadable.
 * - One recorder per directory: a lock file holds the owner's pid (a stale one, from a process that is
 *   gone, is taken over).
 * File operations run one at a time (a serial lane), so sealing never races an append.
 */
import {
  accessSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { open, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describeError } from './report';

export interface SpilledEvent {
  id: string;
  event: Record<string, unknown>;
}

/** A sealed segment taken for replay. */
export interface SpillSegment {
  readonly name: string;
  readonly events: SpilledEvent[];
  /** Lines that could not be read back (a torn last line after a crash, or a damaged file). */
  readonly unreadable: number;
}

export type SpillAppendResult = 'ok' | 'full' | 'unserialisable';

export interface SpillOptions {
  /** Bytes on disk (and queued for it) beyond which append() answers 'full'. */
  maxBytes: number;
  /** A segment is sealed once it holds this many bytes. */
  segmentBytes?: number;
  /** Events that were accepted but could not be written (disk full, I/O error): they are lost. */
  onWriteError: (lostEvents: number, err: unknown) => void;
}

interface SegmentInfo {
  name: string;
  bytes: number;
  /** Non-empty lines written (or counted at open): one per event. */
  lines: number;
}

const SEGMENT_NAME = /^\d{12}\.ndjson$/;
const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const LOCK_FILE = '.lock';

/** Directories a recorder of this process holds: the pid in the lock file cannot tell them apart. */
const heldInThisProcess = new Set<string>();

export class Spill {
  /** Sealed segments, oldest first, not taken by replay. */
  private readonly sealed: SegmentInfo[] = [];
  private current: SegmentInfo | undefined;
  private handle: FileHandle | undefined;
  private queue: string[] = [];
  private queueLineBytes: number[] = [];
  private queueBytes = 0;
  private flushScheduled = false;
  private lane: Promise<unknown> = Promise.resolve();
  private totalBytes = 0;
  private unsettled = 0;
  private closed = false;

  private constructor(
    readonly dir: string,
    private nextSeq: number,
    private readonly options: Required<SpillOptions>,
  ) {}

  /**
   * Opens (creating it if needed) and locks the directory, and counts what an earlier run left there.
   * Synchronous: the recorder is created synchronously, and this runs once per recorder.
   */
  static open(dir: string, options: SpillOptions): Spill {
    const abs = resolve(dir);
    try {
      mkdirSync(abs, { recursive: true });
      accessSync(abs, constants.R_OK | constants.W_OK);
    } catch (err) {
      throw new Error(
        `spillDir: cannot use ${abs} (${describeError(err)}); pass a directory the crawler can create and write`,
      );
    }
    lockDirectory(abs);
    try {
      const found = readdirSync(abs)
        .filter((n) => SEGMENT_NAME.test(n))
        .sort();
      const segments: SegmentInfo[] = [];
      for (const name of found) {
        const path = join(abs, name);
        const bytes = statSync(path).size;
        // An empty segment: created, then the process stopped before its first write.
        if (bytes === 0) unlinkSync(path);
        else segments.push({ name, bytes, lines: countLines(path) });
      }
      const last = found.length > 0 ? Number(found[found.length - 1]!.slice(0, 12)) : 0;
      const spill = new Spill(abs, last + 1, { segmentBytes: DEFAULT_SEGMENT_BYTES, ...options });
      for (const s of segments) {
        spill.sealed.push(s);
        spill.totalBytes += s.bytes;
        spill.unsettled += s.lines;
      }
      return spill;
    } catch (err) {
      unlockDirectory(abs);
      throw new Error(`spillDir: cannot read ${abs} (${describeError(err)})`);
    }
  }

  /** Events in the spill not yet settled (on disk, or queued for it). */
  get events(): number {
    return this.unsettled;
  }

  /** Bytes on disk and queued for it. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Queues one event for the disk (written in the background, a queue at a time). */
  append(id: string, event: Record<string, unknown>): SpillAppendResult {
    if (this.closed) return 'full';
    let line: string;
    try {
      line = `${JSON.stringify({ id, event })}\n`;
    } catch {
      // A BigInt or a cycle: it could not be sent to the store either.
      return 'unserialisable';
    }
    const bytes = Buffer.byteLength(line);
    if (this.totalBytes + bytes > this.options.maxBytes) return 'full';
    this.queue.push(line);
    this.queueLineBytes.push(bytes);
    this.queueBytes += bytes;
    this.totalBytes += bytes;
    this.unsettled += 1;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      void this.serially(() => {
        this.flushScheduled = false;
        return this.writeQueued();
      });
    }
    return 'ok';
  }

  /** The oldest sealed segment, read back; seals the current one if nothing else is there. */
  async takeOldest(): Promise<SpillSegment | undefined> {
    const info = await this.serially(async () => {
      await this.writeQueued();
      if (this.sealed.length === 0 && this.current !== undefined && this.current.lines > 0) await this.sealCurrent();
      const oldest = this.sealed.shift();
      // Nothing queued, nothing on disk: nothing can be unsettled (keeps a miscount from looping replay).
      if (oldest === undefined) this.unsettled = 0;
      return oldest;
    });
    if (info === undefined) return undefined;
    let text: string;
    try {
      text = await readFile(join(this.dir, info.name), 'utf8');
    } catch (err) {
      this.sealed.unshift(info);
      throw err;
    }
    const parsed = parseSegment(text);
    // Counted at open by newlines; the parse is the truth (it also sees damaged lines).
    this.unsettled += parsed.events.length + parsed.unreadable - info.lines;
    info.lines = parsed.events.length + parsed.unreadable;
    taken.set(parsed.events, info);
    return { name: info.name, events: parsed.events, unreadable: parsed.unreadable };
  }

  /** `count` events of a taken segment are settled (stored, or counted failed). */
  settle(count: number): void {
    this.unsettled -= count;
  }

  /** Deletes a taken segment whose events are all settled. */
  async remove(segment: SpillSegment): Promise<void> {
    const info = taken.get(segment.events);
    if (!info) return;
    taken.delete(segment.events);
    await this.serially(async () => {
      await unlink(join(this.dir, info.name));
      this.totalBytes -= info.bytes;
    });
  }

  /** Returns a taken segment unsent (closing): it stays on disk for the next start. */
  putBack(segment: SpillSegment, unsettledEvents: number): void {
    const info = taken.get(segment.events);
    if (!info) return;
    taken.delete(segment.events);
    this.sealed.unshift({ ...info, lines: unsettledEvents });
  }

  /** Writes what is queued, closes the file and releases the directory. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.serially(async () => {
      await this.writeQueued();
      await this.sealCurrent();
    });
    this.closed = true;
    unlockDirectory(this.dir);
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lane.then(fn);
    this.lane = run.catch(() => undefined);
    return run;
  }

  /** Writes the queue, a segment's worth at a time (so a segment ends near segmentBytes). */
  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      let segment: SegmentInfo | undefined;
      let take = this.queue.length;
      let bytes = this.queueBytes;
      try {
        segment = await this.openCurrent();
        const room = this.options.segmentBytes - segment.bytes;
        if (bytes > room) {
          take = 0;
          bytes = 0;
          while (take < this.queue.length && (take === 0 || bytes < room)) bytes += this.queueLineBytes[take++]!;
        }
      } catch (err) {
        this.lose(this.queue.length, this.queueBytes, err);
        this.queue = [];
        this.queueLineBytes = [];
        this.queueBytes = 0;
        continue;
      }
      const lines = this.queue.splice(0, take);
      this.queueLineBytes.splice(0, take);
      this.queueBytes -= bytes;
      const chunk = Buffer.from(lines.join(''));
      try {
        for (let offset = 0; offset < chunk.length;) {
          const { bytesWritten } = await this.handle!.write(chunk, offset, chunk.length - offset);
          offset += bytesWritten;
        }
        segment.bytes += chunk.length;
        segment.lines += lines.length;
        if (segment.bytes >= this.options.segmentBytes) await this.sealCurrent();
      } catch (err) {
        // Cut the segment back to its last whole write, so no line is both counted lost and replayed.
        await this.handle?.truncate(segment.bytes).catch(() => undefined);
        await this.sealCurrent().catch(() => undefined);
        this.lose(lines.length, bytes, err);
      }
    }
  }

  private lose(lines: number, bytes: number, err: unknown): void {
    this.totalBytes -= bytes;
    this.unsettled -= lines;
    this.options.onWriteError(lines, err);
  }

  private async openCurrent(): Promise<SegmentInfo> {
    if (this.current) return this.current;
    const name = `${String(this.nextSeq).padStart(12, '0')}.ndjson`;
    this.nextSeq += 1;
    this.handle = await open(join(this.dir, name), 'ax');
    this.current = { name, bytes: 0, lines: 0 };
    return this.current;
  }

  private async sealCurrent(): Promise<void> {
    const segment = this.current;
    const handle = this.handle;
    this.current = undefined;
    this.handle = undefined;
    if (handle) {
      await handle.datasync().catch(() => undefined);
      await handle.close();
    }
    if (!segment) return;
    if (segment.lines > 0) this.sealed.push(segment);
    else await unlink(join(this.dir, segment.name)).catch(() => undefined);
  }
}

/** Taken segments, keyed by their event array (the handle replay holds). */
const taken = new WeakMap<readonly SpilledEvent[], SegmentInfo>();

function parseSegment(text: string): { events: SpilledEvent[]; unreadable: number } {
  const events: SpilledEvent[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (typeof value === 'object' && value !== null) {
        const { id, event } = value as { id?: unknown; event?: unknown };
        if (typeof id === 'string' && typeof event === 'object' && event !== null && !Array.isArray(event)) {
          events.push({ id, event: event as Record<string, unknown> });
          continue;
        }
      }
    } catch {
      // counted below
    }
    unreadable += 1;
  }
  return { events, unreadable };
}

/** Non-empty lines of a file (a last line without its newline included), read in 1 MB chunks. */
function countLines(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1024 * 1024);
    let lines = 0;
    let lineHasBytes = false;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      for (let i = 0; i < n; i++) {
        if (buf[i] === 10) {
          if (lineHasBytes) lines += 1;
          lineHasBytes = false;
        } else lineHasBytes = true;
      }
    }
    return lines + (lineHasBytes ? 1 : 0);
  } finally {
    closeSync(fd);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lockDirectory(abs: string): void {
  if (heldInThisProcess.has(abs)) {
    throw new Error(
      `spillDir: ${abs} is already used by another recorder in this process; give each recorder its own directory`,
    );
  }
  const path = join(abs, LOCK_FILE);
  try {
    writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new Error(`spillDir: cannot lock ${abs} (${describeError(err)}); pass a directory the crawler can write`);
    const owner = Number(readFileSync(path, 'utf8').trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw new Error(
        `spillDir: ${abs} is in use by process ${owner} (another recorder); give each recorder its own ` +
          `directory, or delete ${path} if that process is not one`,
      );
    }
    // Left by a recorder that did not close (a crash): its segments are ours to send now.
    writeFileSync(path, `${process.pid}\n`);
  }
  heldInThisProcess.add(abs);
}

function unlockDirectory(abs: string): void {
  heldInThisProcess.delete(abs);
  try {
    unlinkSync(join(abs, LOCK_FILE));
  } catch {
    // Already gone: nothing to release.
  }
}
