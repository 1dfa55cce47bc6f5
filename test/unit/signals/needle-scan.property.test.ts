import fc from 'fast-check';
import { NeedleRegistry, NeedleScanner } from '../../../signals/needle-scan';

// A small alphabet makes overlaps, prefixes of other needles and repeated needles common.
const text = (max: number) => fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', '拦', '😀'), maxLength: max });

describe('NeedleScanner', () => {
  it('finds exactly the needles `includes` finds, in one pass', () => {
    fc.assert(
      fc.property(fc.array(text(6).filter((s) => s.length > 0), { minLength: 1, maxLength: 20 }), fc.array(text(60), { minLength: 1, maxLength: 5 }), (needles, texts) => {
        const scanner = new NeedleScanner(needles);
        for (const t of texts) {
          const hits = scanner.scan(t);
          // Each scan's hits describe that scan only: earlier texts leave nothing behind.
          expect(needles.map((_, id) => hits.has(id))).toEqual(needles.map((n) => t.includes(n)));
        }
      }),
      { numRuns: 300 },
    );
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
