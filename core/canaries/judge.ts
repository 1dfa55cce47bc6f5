/**
 * The verdict on one canary fetch. Production's classifier speaks first, because a canary travels like
 * production traffic and must be judged like it; only a page the classifier calls normal is checked
 * against the known answer:
 *
 *   network error         → classifier: connection reset = `blocked`, anything else = `error`
 *   challenge/block page  → `blocked` (hard_block, challenge or soft_block)
 *   other 4xx/5xx, or a status the canary does not expect (a redirect, a 404) → `error`
 *   normal page, a content check fails → `mismatch` (the most serious result: wrong data that parses)
 *   normal page, every check holds     → `pass`
 */
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import { BODY_SAMPLE_CHARS } from '@target-health/crawler/events/event';
import type { Classification, Classifier } from '@target-health/crawler/events/classify';
import { type CheckedExpectation, checkContent, checkStatus } from './check';
import type { Expectation } from './expectation';
import type { FetchOutcome } from './fetch-outcome';
import type { HtmlParser } from './html-document';
import { pageTitle, visibleTextStart } from './page-text';
import type { CanaryResultKind } from './types';

export interface CanaryVerdict {
  result: CanaryResultKind;
  /** One line: why this result. */
  reason: string;
  /** A short excerpt a person can judge from (expected vs actual, the block page's title, the error). */
  evidence: string;
  classification: Classification;
  /** Status check first, then content checks (content checks only when the page looked normal). */
  checks: CheckedExpectation[];
}

export const EVIDENCE_CHARS = 500;

// Well formed and cut on code-point boundaries: the page's NUL or half an emoji would make PostgreSQL
// refuse the run (and they are no use in a notification either).
const cut = (text: string, limit = EVIDENCE_CHARS): string => cutText(wellFormed(text), limit);

/**
 * The production classifier judges first; `parseHtml` (server/canary-runner/html.ts)
 * parses a normal page for CSS checks.
 */
export function judgeCanary(
  fetched: FetchOutcome,
  expect: readonly Expectation[],
  classify: Classifier,
  parseHtml: HtmlParser,
): CanaryVerdict {
  const verdict = verdictOf(fetched, expect, classify, parseHtml);
  return { ...verdict, reason: wellFormed(verdict.reason) };
}

function verdictOf(
  fetched: FetchOutcome,
  expect: readonly Expectation[],
  classify: Classifier,
  parseHtml: HtmlParser,
): CanaryVerdict {
  if (fetched.kind === 'network-error') {
    const classification = classify({ networkError: fetched.networkError });
    return {
      result: classification.outcome === 'hard_block' ? 'blocked' : 'error',
      reason: `${classification.reason} (${fetched.message})`,
      evidence: cut(fetched.message),
      classification,
      checks: [],
    };
  }

  const classification = classify({
    status: fetched.status,
    headers: fetched.headers,
    bodySample: cutText(fetched.body, BODY_SAMPLE_CHARS, ''),
    bytes: fetched.bytes,
  });
  const status = checkStatus(expect, fetched.status);
  const title = titleOf(fetched.body);

  if (
    classification.outcome === 'hard_block' ||
    classification.outcome === 'challenge' ||
    classification.outcome === 'soft_block'
  ) {
    return {
      result: 'blocked',
      reason: classification.reason,
      evidence: cut(
        `${classification.outcome} on status ` +
          `${fetched.status}${title ? `, title ${JSON.stringify(title)}` : ''}` +
          `${classification.evidence?.matched ? `; matched ${classification.evidence.matched}` : ''}`,
      ),
      classification,
      checks: [status],
    };
  }
  // A status the canary explicitly expects (e.g. a known 410 page) is not an error for this page.
  const expectedError =
    classification.outcome === 'error' &&
    classification.rule === 'status' &&
    status.ok &&
    expect.some((e) => e.kind === 'status');
  if (classification.outcome === 'error' && !expectedError) {
    return {
      result: 'error',
      reason: classification.reason,
      evidence: cut(statusEvidence(fetched, title)),
      classification,
      checks: [status],
    };
  }
  if (!status.ok) {
    const location = fetched.headers.location;
    return {
      result: 'error',
      reason:
        `status ${fetched.status}, expected ` +
        `${status.expected}${location ? ` (redirect to ${location}; point the canary at the final URL)` : ''}`,
      evidence: cut(statusEvidence(fetched, title)),
      classification,
      checks: [status],
    };
  }

  const content = checkContent(expect, { status: fetched.status, body: fetched.body }, parseHtml);
  const failed = content.filter((c) => !c.ok);
  const checks = [status, ...content];
  const partial = fetched.truncated ? ` (page cut at ${fetched.body.length} characters by the body cap)` : '';
  if (failed.length === 0) {
    return {
      result: 'pass',
      reason:
        `status ${fetched.status}; ` +
        `${content.length === 1 ? '1 check holds' : `all ${content.length} checks hold`}`,
      evidence: cut(content.map((c) => `${c.check}: ${c.actual}`).join('; ') || `status ${fetched.status}`),
      classification,
      checks,
    };
  }
  const first = failed[0]!;
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more of ${content.length} checks)` : '';
  return {
    result: 'mismatch',
    reason: `wrong value on a normal-looking page: ${first.check}, got ${first.actual}${more}${partial}`,
    evidence: cut(
      failed
        .map((c) => `${c.check}: expected ${c.expected}, got ${c.actual}${c.excerpt ? ` in ${c.excerpt}` : ''}`)
        .join(' | '),
    ),
    classification,
    checks,
  };
}

function statusEvidence(fetched: Extract<FetchOutcome, { kind: 'response' }>, title: string | undefined): string {
  const snippet = visibleTextStart(fetched.body, 160);
  return `status ${fetched.status}${title ? `, title ${JSON.stringify(title)}` : ''}${snippet ? `: ${snippet}` : ''}`;
}

function titleOf(body: string): string | undefined {
  return pageTitle(cutText(body, BODY_SAMPLE_CHARS, ''));
}
