/**
 * Finds every one of a catalogue's body needles in one pass over the page (Aho–Corasick), instead of one
 * `includes` scan per needle: the catalogue holds a few hundred needles, and classification runs on every
 * event (docs/classification.md, "Speed"). Built once per compiled classifier; pure, no allocation per scan
 * beyond the first.
 *
 * Needles are given lower-cased; the text is scanned as sent, folded character by character: a
 * character whose upper case is one character matches like its lower case (`A` like `a`, `É` like `é`,
 * `Д` like `д`). So a page need not be lower-cased before it is scanned (4 KB cost ~3 µs; on an ordinary
 * page nothing else needs it lower-cased). Where Node's Buffer is at hand, the text is first copied into
 * a reused UTF-16 array (native, ~0.2 µs for 4 KB) and the loop reads that: faster than `charCodeAt` on
 * a slice of the page, which is what a body sample usually is (measured; docs/classification.md "Speed").
 */
/**
 * Node's Buffer, as far as this module uses it. Declared here rather than taken from Node's typings: the
 * events code is pure and runs where there is no Buffer too (the check below finds out at run time).
 */
declare const Buffer: { from(buffer: ArrayBuffer): Utf16Writer };
interface Utf16Writer {
  write(text: string, offset: number, encoding: 'utf16le'): number;
}

/**
 * Whether texts are copied into a UTF-16 array before the loop: Node's Buffer writes code units as they
 * are (lone surrogates included), and a Uint16Array reads them back in the platform's byte order, which
 * must then be little-endian.
 */
const UTF16_COPY = typeof Buffer !== 'undefined' && new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Registers needles while markers compile, then builds the automaton once. */
export class NeedleRegistry {
  private readonly ids = new Map<string, number>();
  private scanner: NeedleScanner | undefined;

  /** The id of `needle` (the same text gets the same id). */
  idOf(needle: string): number {
    let id = this.ids.get(needle);
    if (id === undefined) {
      if (this.scanner !== undefined) throw new Error('NeedleRegistry: a needle was added after the scanner was built');
      id = this.ids.size;
      this.ids.set(needle, id);
    }
    return id;
  }

  /** The scanner for every needle registered so far; built on first use. */
  build(): NeedleScanner {
    return (this.scanner ??= new NeedleScanner([...this.ids.keys()]));
  }
}

/** Which needles a scanned text holds: `has(id)`. Valid until the scanner's next scan. */
export interface NeedleHits {
  has(id: number): boolean;
}

export class NeedleScanner {
  /**
   * Dense transitions by row: `next[row + class]` is the next state's row (its number × `width`), bitwise
   * negated (so < 0) when needles end at that state. A row instead of a state number saves a multiply per
   * character; the sign saves reading the outputs on the ~all characters where no needle ends.
   */
  private readonly next: Int32Array;
  private readonly width: number;
  /** Character code → alphabet class; 0 for a character no needle contains (one byte when the alphabet fits). */
  private readonly classOf: Uint8Array | Uint16Array;
  /** Needle ids ending at each state (its own and those of its failure chain), flattened. */
  private readonly outStart: Int32Array;
  private readonly outIds: Int32Array;
  /** Scan generation per needle: a needle was found in the current scan when its stamp equals `generation`. */
  private readonly stamps: Uint32Array;
  private generation = 0;
  private readonly hits: NeedleHits;
  /** The reused copy of the text being scanned (unitsOf), and the Buffer over the same memory. */
  private units: Uint16Array | undefined;
  private unitBytes: Utf16Writer | undefined;

  constructor(needles: readonly string[]) {
    const classes = new Map<number, number>();
    for (const needle of needles) {
      for (let i = 0; i < needle.length; i += 1) {
        const code = needle.charCodeAt(i);
        if (!classes.has(code)) classes.set(code, classes.size + 1);
      }
    }
    const width = classes.size + 1;
    this.width = width;
    this.classOf = width <= 0x100 ? new Uint8Array(0x10000) : new Uint16Array(0x10000);
    for (const [code, cls] of classes) this.classOf[code] = cls;
    // Upper case onto lower: only where it is one character each way (not "SS" for "ß", nor "İ").
    for (const [code, cls] of classes) {
      const lower = String.fromCharCode(code);
      const upper = lower.toUpperCase();
      if (upper.length !== 1 || upper === lower || upper.toLowerCase() !== lower) continue;
      const up = upper.charCodeAt(0);
      if (!classes.has(up)) this.classOf[up] = cls;
    }
    // The trie, with sparse children while it grows.
    const children: Map<number, number>[] = [new Map<number, number>()];
    const ends: number[][] = [[]];
    needles.forEach((needle, id) => {
      let state = 0;
      for (let i = 0; i < needle.length; i += 1) {
        const cls = classes.get(needle.charCodeAt(i)) ?? 0;
        let child = children[state]?.get(cls);
        if (child === undefined) {
          child = children.length;
          children.push(new Map<number, number>());
          ends.push([]);
          children[state]?.set(cls, child);
        }
        state = child;
      }
      ends[state]?.push(id);
    });

    // Breadth first: failure links, dense transitions (state numbers), outputs merged along the failure chain.
    const states = children.length;
    const next = new Int32Array(states * width);
    const fail = new Int32Array(states);
    const queue: number[] = [];
    for (const [cls, child] of children[0] ?? []) {
      next[cls] = child;
      queue.push(child);
    }
    for (let head = 0; head < queue.length; head += 1) {
      const state = queue[head] ?? 0;
      const failEnds = ends[fail[state] ?? 0] ?? [];
      if (failEnds.length > 0) ends[state]?.push(...failEnds);
      for (let cls = 1; cls < width; cls += 1) {
        const child = children[state]?.get(cls);
        const viaFail = next[(fail[state] ?? 0) * width + cls] ?? 0;
        if (child === undefined) {
          next[state * width + cls] = viaFail;
        } else {
          next[state * width + cls] = child;
          fail[child] = viaFail;
          queue.push(child);
        }
      }
    }
    this.outStart = new Int32Array(states + 1);
    let total = 0;
    for (let s = 0; s < states; s += 1) {
      this.outStart[s] = total;
      total += ends[s]?.length ?? 0;
    }
    this.outStart[states] = total;
    this.outIds = new Int32Array(total);
    ends.forEach((list, s) => this.outIds.set(list, this.outStart[s] ?? 0));
    // State numbers to rows, negated where needles end.
    for (let i = 0; i < next.length; i += 1) {
      const target = next[i] ?? 0;
      next[i] = (ends[target]?.length ?? 0) > 0 ? ~(target * width) : target * width;
    }
    this.next = next;

    this.stamps = new Uint32Array(needles.length);
    this.hits = { has: (id) => this.stamps[id] === this.generation };
  }

  /** The text's UTF-16 code units in the reused array, or undefined where there is no Buffer (charCodeAt then). */
  private unitsOf(text: string): Uint16Array | undefined {
    if (!UTF16_COPY) return undefined;
    if (this.units === undefined || this.units.length < text.length) {
      const buffer = new ArrayBuffer(Math.max(text.length, 4_096) * 2);
      this.units = new Uint16Array(buffer);
      this.unitBytes = Buffer.from(buffer);
    }
    this.unitBytes?.write(text, 0, 'utf16le');
    return this.units;
  }

  /** Scans `text`; the returned hits stay valid until the next `scan` of this scanner. */
  scan(text: string): NeedleHits {
    this.generation = (this.generation + 1) >>> 0;
    if (this.generation === 0) {
      // Wrapped after 2^32 scans: clear so that no old stamp reads as current.
      this.stamps.fill(0);
      this.generation = 1;
    }
    const { next, width, classOf, outStart, outIds, stamps, generation } = this;
    const units = this.unitsOf(text);
    const length = text.length;
    // No branch for characters outside the alphabet: their class 0 column leads every row back to the
    // root (a third of an HTML page's characters; the branch cost more than the lookup).
    let row = 0;
    for (let i = 0; i < length; i += 1) {
      row = next[row + (classOf[units === undefined ? text.charCodeAt(i) : (units[i] as number)] as number)] as number;
      if (row < 0) {
        row = ~row;
        const state = row / width;
        const to = outStart[state + 1] as number;
        for (let o = outStart[state] as number; o < to; o += 1) stamps[outIds[o] as number] = generation;
      }
    }
    return this.hits;
  }
}
