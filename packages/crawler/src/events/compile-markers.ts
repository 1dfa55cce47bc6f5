/**
 * Turns marker specs into matchers once per configuration: needles lower-cased, regexes built. Matching
 * a page is then a handful of look-ups in the page's one-pass needle scan (or `includes` calls over the
 * lower-cased prefix, for markers compiled without the catalogue's registry), and `i`-flagged regexes
 * over the prefix as sent.
 */
import { type MarkerEvidence, type MarkerKind, type MarkerSpec } from './marker-spec';
import { type NeedleRegistry } from './needle-scan';
import { type PageView } from './page-view';

export interface MarkerMatch {
  markerId: string;
  vendor: string;
  kind: MarkerKind;
  evidence: MarkerEvidence;
  /** What matched, for the reason: a text, `title "…"` or `header name: value`. */
  matched: string;
  /**
   * Where the first body condition matched: a character offset into the scanned body (the sample's
   * first characters, lower-cased), for explanations (`target-health classify`). Absent when only the
   * title, headers or status matched.
   */
  offset?: number;
}

export interface CompiledMarker {
  id: string;
  vendor: string;
  kind: MarkerKind;
  evidence: MarkerEvidence;
  match(view: PageView): MarkerMatch | undefined;
}

/** What a condition found ('' for a bare status match), and where in the body when it looked there. */
type Found = { text: string; offset?: number };
type Test = (view: PageView) => Found | undefined;

const SNIPPET = 80;
const snippet = (text: string): string => (text.length > SNIPPET ? `${text.slice(0, SNIPPET - 1)}…` : text);

/**
 * With `needles`, body texts are looked up in the page's one-pass scan (`view.hits`, from that registry's
 * scanner: a catalogue's markers share one); without, each is an `includes` over the body.
 */
export function compileMarker(spec: MarkerSpec, needles?: NeedleRegistry): CompiledMarker {
  const contains = (needle: string): ((v: PageView) => boolean) => {
    if (needles === undefined) return (v) => v.body.includes(needle);
    const id = needles.idOf(needle);
    return (v) => (v.hits === undefined ? v.body.includes(needle) : v.hits.has(id));
  };
  const tests: Test[] = [];
  if (spec.statuses) {
    const statuses = new Set(spec.statuses);
    // First so a status mismatch skips the body scans.
    tests.push((v) => (v.status !== undefined && statuses.has(v.status) ? { text: '' } : undefined));
  }
  if (spec.headers) {
    for (const condition of spec.headers) {
      const contains = condition.contains?.toLowerCase();
      const regex = condition.regex === undefined ? undefined : new RegExp(condition.regex, 'i');
      tests.push((v) => {
        const value = v.headers[condition.name];
        if (value === undefined) return undefined;
        if (contains !== undefined && !value.includes(contains)) return undefined;
        if (regex !== undefined && !regex.test(value)) return undefined;
        return { text: `header ${condition.name}: ${snippet(value)}` };
      });
    }
  }
  if (spec.titleRegex !== undefined) {
    const regex = new RegExp(spec.titleRegex, 'i');
    tests.push((v) =>
      v.title !== undefined && regex.test(v.title) ? { text: `title "${snippet(v.title)}"` } : undefined,
    );
  }
  if (spec.bodyAll) {
    const texts = spec.bodyAll.map((n) => n.toLowerCase());
    const checks = texts.map(contains);
    tests.push((v) =>
      checks.every((has) => has(v))
        ? { text: `"${texts.join('" + "')}"`, offset: v.body.indexOf(texts[0] ?? '') }
        : undefined,
    );
  }
  if (spec.bodyAny) {
    const texts = spec.bodyAny.map((n) => n.toLowerCase());
    const checks = texts.map(contains);
    tests.push((v) => {
      const at = checks.findIndex((has) => has(v));
      if (at === -1) return undefined;
      const text = texts[at] ?? '';
      // Where it is, for `target-health classify`: looked up only for the needle that matched.
      return { text: `"${text}"`, offset: v.body.indexOf(text) };
    });
  }
  if (spec.bodyRegex !== undefined) {
    const regex = new RegExp(spec.bodyRegex, 'i');
    tests.push((v) => {
      // The `i` flag does the case: no lower-cased copy of the page for this.
      const m = regex.exec(v.raw);
      return m ? { text: `"${snippet(m[0])}"`, offset: m.index } : undefined;
    });
  }

  return {
    id: spec.id,
    vendor: spec.vendor,
    kind: spec.kind,
    evidence: spec.evidence,
    match(view) {
      const parts: string[] = [];
      let offset: number | undefined;
      for (const test of tests) {
        const found = test(view);
        if (found === undefined) return undefined;
        if (found.text !== '') parts.push(found.text);
        offset ??= found.offset;
      }
      const match: MarkerMatch = {
        markerId: spec.id,
        vendor: spec.vendor,
        kind: spec.kind,
        evidence: spec.evidence,
        matched: parts.join(' and '),
      };
      if (offset !== undefined) match.offset = offset;
      return match;
    },
  };
}
