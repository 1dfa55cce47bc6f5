/**
 * Keeps the real-page corpus honest: every page is listed with a label and its provenance, every listed file
 * exists, and the collection still holds the numbers docs and benchmarks rely on (test/fixtures/real-pages/README.md).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const FIXTURES = join(__dirname, '..', 'fixtures');
const SETS = ['real-pages', 'real-pages-holdout'] as const;

const pageSchema = z
  .object({
    file: z.string().regex(/^[a-z0-9][a-z0-9.-]*\.html$/, 'a lower-case file name ending in .html'),
    label: z
      .object({
        class: z.enum(['challenge', 'hard_block', 'soft_block', 'rate_limit', 'ok']),
        vendor: z.string().min(1),
        // Only when the source recorded it; many sources kept the body alone.
        status: z.number().int().min(100).max(999).optional(),
        // The status the vendor usually serves this page with, when documented; not a recorded fact.
        typicalStatus: z.number().int().min(100).max(999).optional(),
        headers: z.record(z.string(), z.string()),
      })
      .strict(),
    // The page family (one vendor's one page design), so figures and the holdout split can be read per family.
    template: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'a lower-case id such as cloudflare-1020 or ok-article'),
    authenticity: z.enum(['captured', 'reconstructed-from-thread']),
    provenance: z
      .object({
        repository: z.string().url(),
        path: z.string().min(1),
        commit: z.string().regex(/^[0-9a-f]{40}$/, 'a full commit hash'),
        licence: z.string().min(1),
        // The issue or pull-request thread a reconstructed page was pasted into (path is then `issues/N`).
        thread: z.string().url().optional(),
      })
      .strict(),
    bytes: z.number().int().positive(),
    notes: z.string().min(1),
  })
  .strict()
  .refine((page) => (page.authenticity === 'reconstructed-from-thread') === (page.provenance.thread !== undefined), {
    message: 'a page reconstructed from a thread names that thread in provenance.thread, and only such a page does',
    path: ['provenance', 'thread'],
  });
const manifestSchema = z.object({ version: z.literal(1), pages: z.array(pageSchema).min(1) }).strict();
type Page = z.infer<typeof pageSchema>;

const load = (set: (typeof SETS)[number]): Page[] => {
  const raw: unknown = JSON.parse(readFileSync(join(FIXTURES, set, 'manifest.json'), 'utf8'));
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      parsed.error.issues.map((i) => `${set}/manifest.json ${i.path.join('.')}: ${i.message}`).join('\n'),
    );
  }
  return parsed.data.pages;
};

describe.each(SETS)('test/fixtures/%s', (set) => {
  const dir = join(FIXTURES, set);
  const pages = load(set);

  it('lists every page once, and every listed page exists with its recorded size', () => {
    const listed = pages.map((p) => p.file);
    expect(new Set(listed).size).toBe(listed.length);
    const onDisk = readdirSync(dir).filter((f) => f.endsWith('.html'));
    expect([...onDisk].sort()).toEqual([...listed].sort());
    for (const page of pages) {
      expect(existsSync(join(dir, page.file))).toBe(true);
      expect({ file: page.file, bytes: readFileSync(join(dir, page.file)).length }).toEqual({
        file: page.file,
        bytes: page.bytes,
      });
    }
  });

  it('has a README that says what the set is for', () => {
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toMatch(
      set === 'real-pages' ? /How to add a page/ : /never for\s+writing markers/,
    );
  });
});

describe('the collection as a whole', () => {
  const corpus = load('real-pages');
  const holdout = load('real-pages-holdout');
  const all = [...corpus, ...holdout];
  const refusals = all.filter((p) => p.label.class !== 'ok');
  const ordinary = all.filter((p) => p.label.class === 'ok');

  it('meets the minimum counts', () => {
    expect(refusals.length).toBeGreaterThanOrEqual(150);
    expect(ordinary.length).toBeGreaterThanOrEqual(100);
    // Distinct refusal vendors and walls (the classifier's target asks for 25; README lists the ones still missing).
    expect(new Set(refusals.map((p) => p.label.vendor)).size).toBeGreaterThanOrEqual(25);
    // Pages whose source recorded the real status, so a benchmark can feed it instead of typicalStatus.
    expect(all.filter((p) => p.label.status !== undefined).length).toBeGreaterThanOrEqual(12);
  });

  it('holds back part of every vendor that has three pages or more, never most of it', () => {
    const byVendor = new Map<string, { total: number; held: number }>();
    for (const page of all) {
      const entry = byVendor.get(page.label.vendor) ?? { total: 0, held: 0 };
      entry.total += 1;
      if (holdout.includes(page)) entry.held += 1;
      byVendor.set(page.label.vendor, entry);
    }
    const skewed = [...byVendor]
      .filter(([, { total, held }]) => total >= 3 && (held === 0 || held > total / 2))
      .map(([vendor, { total, held }]) => `${vendor}: ${held} of ${total} in the holdout`);
    expect(skewed).toEqual([]);
  });

  it('gives every template one class', () => {
    const classes = new Map<string, Set<string>>();
    for (const page of all) classes.set(page.template, (classes.get(page.template) ?? new Set()).add(page.label.class));
    expect(
      [...classes].filter(([, set]) => set.size > 1).map(([template, set]) => `${template}: ${[...set].join(', ')}`),
    ).toEqual([]);
  });

  it('gives every refusal template one vendor (ordinary templates span the bait vendors)', () => {
    const vendors = new Map<string, Set<string>>();
    for (const page of refusals)
      vendors.set(page.template, (vendors.get(page.template) ?? new Set()).add(page.label.vendor));
    expect(
      [...vendors].filter(([, set]) => set.size > 1).map(([template, set]) => `${template}: ${[...set].join(', ')}`),
    ).toEqual([]);
  });

  it('holds back about a fifth of the pages, of both kinds', () => {
    const share = holdout.length / all.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.25);
    expect(holdout.some((p) => p.label.class === 'ok')).toBe(true);
    expect(holdout.some((p) => p.label.class !== 'ok')).toBe(true);
  });

  it('never puts the same page in both sets', () => {
    const inCorpus = new Set(corpus.map((p) => `${p.provenance.repository} ${p.provenance.path}`));
    expect(holdout.filter((p) => inCorpus.has(`${p.provenance.repository} ${p.provenance.path}`))).toEqual([]);
    const names = new Set(corpus.map((p) => p.file));
    expect(holdout.filter((p) => names.has(p.file))).toEqual([]);
  });
});
