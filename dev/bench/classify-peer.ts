/**
 * The peer a user would pick instead, the `is-antibot` npm package (a devDependency: only the benchmark
 * and its test load it), mapped onto our outcomes so the evaluation core scores both the same way.
 *
 * It is given what our classifier is given — the body as the crawler sends it, the status, the headers
 * when the mode has them — and no URL (the events carry none to the classifier either). Its answer is
 * `{detected, provider, technique}`; the mapping (docs/classification.md "bench:classify"):
 * - detected, technique `captcha` or `javascript` → `challenge` (it tests the client);
 * - detected, technique `waf`, `cookie` or none → `hard_block` on a 4xx/5xx, `soft_block` below (a refusal);
 * - not detected → what a crawler's status check alone says: 403 and 429 `hard_block` (the rule any user
 *   adds around the package, so the comparison is about recognising pages, not about statuses), other
 *   4xx/5xx `error`, else `ok`.
 */
import type isAntibot from 'is-antibot';
import type { ClassifiableEvent } from '@target-health/crawler/events/classify';
import type { Verdict } from '../../core/signals/evaluate';

export type PeerInput = isAntibot.Input;
export type PeerResult = Pick<isAntibot.Result, 'detected' | 'provider' | 'technique'>;

/** What the package is called with for `event`. */
export function peerInput(event: ClassifiableEvent): PeerInput {
  const input: PeerInput = { statusCode: event.status ?? 200 };
  if (event.bodySample !== undefined) input.html = event.bodySample;
  if (event.headers !== undefined) input.headers = { ...event.headers };
  return input;
}

/** The package's answer as one of our outcomes (the mapping above). */
export function peerVerdict(result: PeerResult, status: number): Verdict & { provider: string | null } {
  if (result.detected) {
    if (result.technique === 'captcha' || result.technique === 'javascript')
      return { outcome: 'challenge', provider: result.provider };
    return { outcome: status >= 400 ? 'hard_block' : 'soft_block', provider: result.provider };
  }
  if (status === 403 || status === 429) return { outcome: 'hard_block', provider: null };
  return { outcome: status >= 400 ? 'error' : 'ok', provider: null };
}

let detect: ((input: PeerInput) => isAntibot.Result) | undefined;

/**
 * Classifies with the package in this process. Loaded on first use: it requires ES-module-only packages,
 * which Node 20 loads through require(esm) but Jest's module runtime cannot (the test runs it in a
 * worker thread instead, test/unit/signals/real-pages-figures.test.ts).
 */
export function isAntibotVerdict(event: ClassifiableEvent): Verdict & { provider: string | null } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (above)
  detect ??= require('is-antibot') as (input: PeerInput) => isAntibot.Result;
  return peerVerdict(detect(peerInput(event)), event.status ?? 200);
}
