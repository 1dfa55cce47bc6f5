/**
 * `matches` patterns run on RE2 (re2js, a pure JavaScript port): matching takes time linear in the text,
 * whatever the pattern. JavaScript's own RegExp backtracks, so a careless pattern such as `^(\d+)+$`
 * doubles its time with every character of a page's text — on the worker's main thread, where it would
 * stall every site's loop. Patterns are written as JavaScript regexes (translated: `\u00e9`, `(?<name>…)`
 * work); what RE2 cannot run in linear time — lookahead, lookbehind, backreferences — is refused when
 * the canary is defined, with the reason.
 */
import { RE2JS } from 're2js';
import { describeValue } from '@target-health/crawler/events/zod-issues';

export const PATTERN_SYNTAX_HELP =
  'canary patterns run on RE2 in linear time: no lookahead (?=…), lookbehind (?<=…) or backreferences \\1';

export interface CompiledPattern {
  /** True when the pattern matches anywhere in `text` (unanchored, like RegExp.test). */
  test(text: string): boolean;
}

export type PatternResult = { ok: true; pattern: CompiledPattern } | { ok: false; problem: string };

export function compilePattern(pattern: string): PatternResult {
  try {
    const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { ok: true, pattern: { test: (text) => re.test(text) } };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, problem: message.replace(/^error parsing regexp: /, '') };
  }
}

/** Why `pattern` cannot be used, as one line naming `field`, or undefined. */
export function patternProblem(pattern: string, field: string): string | undefined {
  const compiled = compilePattern(pattern);
  if (compiled.ok) return undefined;
  return (
    `${field}: ${describeValue(pattern)} is not a valid regular expression here (${compiled.problem}); ` +
    `${PATTERN_SYNTAX_HELP}; fix the pattern`
  );
}
