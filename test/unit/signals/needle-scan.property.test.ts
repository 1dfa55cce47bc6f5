import fc from 'fast-check';
import { NeedleRegistry, NeedleScanner } from '@target-health/crawler/events/needle-scan';
import { runs } from '../../kit/sizes';

// A small alphabet makes overlaps, prefixes of other needles and repeated needles common. Needles are
// lower-case (the markers' are lower-cased when they compile); pages carry both cases, and characters
// whose case changes length ("ß" → "SS", "İ" → "i̇") or that have none.
const LOWER = ['a', 'b', 'c', 'é', 'д', '拦', '😀', '1'];
const needle = (max: number) => fc.string({ unit: fc.constantFrom(...LOWER), maxLength: max });
const text = (max: number) =>
  fc.string({ unit: fc.constantFrom(...LOWER, 'A', 'B', 'É', 'Д', 'ß', 'İ', '\ud800'), maxLength: max });

describe('NeedleScanner', () => {
  it('finds exactly the needles `includes` finds in the lower-cased text, in one pass over the text as sent', () => {
    fc.assert(
      fc.property(
        fc.array(
          needle(6).filter((s) => s.length > 0),
          { minLength: 1, maxLength: 20 },
        ),
        fc.array(text(60), { minLength: 1, maxLength: 5 }),
        (needles, texts) => {
          const scanner = new NeedleScanner(needles);
          for (const t of texts) {
            const hits = scanner.scan(t);
            // Each scan's hits describe that scan only: earlier texts leave nothing behind.
            expect(needles.map((_, id) => hits.has(id))).toEqual(needles.map((n) => t.toLowerCase().includes(n)));
          }
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('a long text after short ones: the reused copy grows, and nothing of an earlier text is read', () => {
    const scanner = new NeedleScanner(['needle', 'tail']);
    expect(scanner.scan('a NEEDLE here').has(0)).toBe(true);
    const long = `${'x'.repeat(20_000)}Tail`;
    const hits = scanner.scan(long);
    expect([hits.has(0), hits.has(1)]).toEqual([false, true]);
    // Shorter again: the copy holds the long text's characters past this one's end, which must not count.
    expect(scanner.scan('tai').has(1)).toBe(false);
  });

  it('a registry gives one id per text and refuses needles once built', () => {
    const registry = new NeedleRegistry();
    expect([registry.idOf('cf_chl_opt'), registry.idOf('px-captcha'), registry.idOf('cf_chl_opt')]).toEqual([0, 1, 0]);
    const scanner = registry.build();
    expect(scanner.scan('<script>window._cf_chl_opt={}</script>').has(0)).toBe(true);
    expect(scanner.scan('<div id="px-captcha"></div>').has(0)).toBe(false);
    expect(() => registry.idOf('new needle')).toThrow(/after the scanner was built/);
    expect(registry.idOf('px-captcha')).toBe(1);
  });
});
