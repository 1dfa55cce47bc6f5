import fc from 'fast-check';
import { LABEL_DX, LABEL_FONT_PX, MAX_LANES, clusterText, layoutMarks } from '../../../tools/charts/mark-layout';
import { fitText, textWidthPx } from '../../../tools/charts/text-width';
import type { ChartMark, MarkKind } from '../../../tools/charts/types';
import { runs } from '../../kit/sizes';

const W = 1000;
/** A period of 1,000 s on 1,000 px: a second is a pixel. */
const S = 1000;
const mark = (x: number, short: string, kind: MarkKind = 'alert', until: number | null = null): ChartMark => ({
  t: x * S,
  until: until === null ? null : until * S,
  kind,
  short,
  label: `full story of ${short} at ${x}`,
  events: [{ t: x * S, text: short }],
});
const layout = (marks: ChartMark[]) => layoutMarks(marks, ['decision', 'alert', 'control change'], 0, W * S, W);
const LONG = 'alert: something long happened here';

test('marks far apart share the top lane, each label in full right of its point', () => {
  const { labels, lanes } = layout([mark(100, 'alert: degrading'), mark(500, 'alert: resisting')]);
  expect(labels.map((l) => [l.lane, l.text, l.x, l.anchorX])).toEqual([
    [0, 'alert: degrading', 100, 100],
    [0, 'alert: resisting', 500, 500],
  ]);
  expect(lanes).toEqual({ decision: 1, alert: 1, 'control change': 1 });
});

test('marks too close for their labels are staggered over lanes, one lane per label until MAX_LANES', () => {
  const { labels, lanes } = layout([0, 1, 2, 3].map((i) => mark(100 + 20 * i, LONG)));
  expect(labels.map((l) => l.lane)).toEqual([0, 1, 2, 3]);
  expect(labels.every((l) => l.text === LONG)).toBe(true);
  expect(lanes.alert).toBe(MAX_LANES);
});

test('with every lane taken, the label that began first is cut to end before the next mark', () => {
  const { labels } = layout([0, 1, 2, 3, 4].map((i) => mark(100 + 20 * i, LONG)));
  const [first, , , , fifth] = labels;
  expect(fifth).toMatchObject({ lane: 0, text: LONG });
  expect(first!.text).toMatch(/^alert: .*…$/);
  expect(LONG.startsWith(first!.text.slice(0, -1))).toBe(true);
  expect(first!.x + LABEL_DX + textWidthPx(first!.text, LABEL_FONT_PX)).toBeLessThan(fifth!.x - 4);
  // Its tooltip keeps all of it.
  expect(first!.tooltip).toBe('full story of alert: something long happened here at 100');
});

test('too crowded to cut: the next marks join the label before them, which moves right of them', () => {
  const marks = [0, 1, 2, 3, 4].map((i) => mark(100 + 10 * i, `alert: k${i}`));
  const { labels } = layout(marks);
  expect(labels).toHaveLength(4);
  const joined = labels[3]!;
  expect(joined.marks).toEqual([marks[3], marks[4]]);
  expect(joined.text).toBe('alert: k3, k4');
  expect(joined.anchorX).toBe(140);
  expect(joined.tooltip).toBe(`${marks[3]!.label}\n${marks[4]!.label}`);
});

test('marks at one spot share a label: shorts joined without their repeated prefix, or the first and a count', () => {
  expect(layout([mark(100, 'alert: resisting'), mark(103, 'alert: paused')]).labels.map((l) => l.text)).toEqual([
    'alert: resisting, paused',
  ]);
  const many = [0, 1, 2, 3, 4, 5].map((i) => mark(100 + i, `route alert: pool number-${i}`));
  expect(clusterText(many, 200)).toBe('route alert: pool number-0 +5');
  expect(layout(many).labels.map((l) => [l.text, l.marks.length, l.anchorX])).toEqual([
    ['route alert: pool number-0 +5', 6, 105],
  ]);
});

test("a run's label starts after its last step; a label near the right edge is cut to the chart's padding", () => {
  const { labels } = layout([mark(100, 'throttled 16→3 (12 steps)', 'control change', 112), mark(990, LONG)]);
  expect(labels[0]).toMatchObject({ kind: 'alert', x: 990 });
  expect(labels[0]!.text.endsWith('…')).toBe(true);
  expect(990 + LABEL_DX + textWidthPx(labels[0]!.text, LABEL_FONT_PX)).toBeLessThanOrEqual(W + 60);
  expect(labels[1]).toMatchObject({ kind: 'control change', x: 100, anchorX: 112 });
});

test('fitText: whole when it fits, else the longest start that fits with "…"', () => {
  const full = 'alice@example.com';
  expect(fitText('paused', 100, 10)).toBe('paused');
  const cut = fitText(full, 60, 10);
  expect(cut).toMatch(/^alic.*…$/);
  expect(textWidthPx(cut, 10)).toBeLessThanOrEqual(60);
  // One more letter would not fit.
  expect(textWidthPx(`${full.slice(0, cut.length)}…`, 10)).toBeGreaterThan(60);
  // A cut does not end in a space before its "…".
  expect(fitText('resumed by alice', 62, 10)).toBe('resumed…');
  expect(fitText('paused', 5, 10)).toBe('');
});

const kinds: MarkKind[] = ['decision', 'alert', 'control change'];
const arbitraryMarks = fc.array(
  fc.record({
    x: fc.integer({ min: 0, max: W }),
    kind: fc.constantFrom(...kinds),
    short: fc.string({ unit: fc.constantFrom('a', 'm', 'i', ' ', ':', '→', 'W', '1'), minLength: 1, maxLength: 40 }),
  }),
  { maxLength: 60 },
);

test('any marks: each in exactly one label, none empty, and in every lane each drawing ends before the next', () => {
  fc.assert(
    fc.property(arbitraryMarks, (raw) => {
      const marks = raw.map((r) => mark(r.x, r.short, r.kind));
      const { labels, lanes } = layout(marks);
      const placed = labels.flatMap((l) => l.marks);
      expect(placed).toHaveLength(marks.length);
      expect(new Set(placed)).toEqual(new Set(marks));
      for (const l of labels) {
        expect(l.text.length).toBeGreaterThan(0);
        expect(l.lane).toBeLessThan(lanes[l.kind]);
        expect(l.tooltip.split('\n')).toEqual(l.marks.map((m) => m.label));
      }
      for (const kind of kinds)
        for (let lane = 0; lane < MAX_LANES; lane++) {
          const row = labels.filter((l) => l.kind === kind && l.lane === lane).sort((a, b) => a.x - b.x);
          for (let i = 1; i < row.length; i++) {
            const prev = row[i - 1]!;
            const end = Math.max(prev.anchorX + 4, prev.anchorX + LABEL_DX + textWidthPx(prev.text, LABEL_FONT_PX));
            expect(end).toBeLessThanOrEqual(row[i]!.x - 4);
          }
        }
    }),
    { numRuns: runs(500) },
  );
});
