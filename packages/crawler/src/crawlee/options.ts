/**
 * The adapter's options, their defaults, and their check (zod: a wrong option is one line naming it).
 */
import * as z from '../zod';
import { lazy } from '../lazy';
import type { ControlsView } from '../controls/types';
import type { Recorder } from '../recorder/recorder';
import { OUTCOMES, type Outcome, type Route } from '../events/event';
import type { SiteClassifierConfigInput } from '../events/config';
import type { ProxyInfoLike } from './route';

/** What `routeOf` and `pageTypeOf` get of the request (Crawlee's Request fits). */
export interface RequestInfo {
  url: string;
  label?: string | undefined;
  userData: Record<string, unknown>;
}

export interface TargetHealthOptions {
  /** Where events go: `createRecorder(...)` from target-health/recorder. */
  recorder: Recorder;
  /** The controls to obey (the controls client, or any ControlsView). Absent: record only, obey nothing. */
  controls?: ControlsView;
  /** The route of a request. Default: pool and country parsed from the proxy URL's user name (route.ts). */
  routeOf?: (proxyInfo: ProxyInfoLike | undefined, session: { id: string } | undefined) => Route;
  /** The page type of a request. Default: `request.label` (when it is a valid label). */
  pageTypeOf?: (request: RequestInfo) => string | undefined;
  /**
   * Which answers retire the session (as Crawlee's blockedStatusCodes would) and fail the attempt so Crawlee
   * retries it. Default: statuses 401, 403, 429 (or the crawler's own `sessionPoolOptions.blockedStatusCodes`)
   * and pages the classifier calls challenge, hard_block or soft_block. `false`: record only.
   */
  retireSessionOn?: { statuses?: number[]; outcomes?: Outcome[] } | false;
  /** Throw after recording a blocked answer (Crawlee's retry rules apply). Default true; false runs your handler. */
  throwOnBlocked?: boolean;
  /** Throw after recording a 5xx (as Crawlee does, but with the body recorded). Default true. */
  throwOnServerError?: boolean;
  /** A paused site's request waits this long for a resume, then goes back to the queue (5,000 ms). */
  pauseDelayMs?: number;
  /** A request waits this long for a place under the site's concurrencyLimit, then goes back (5,000 ms). */
  gateWaitMs?: number;
  /** Sites the controls know nothing about: crawl them with your own settings (default) or hold them as paused. */
  unknownSite?: 'crawl' | 'pause';
  /** Response headers sent besides those the built-in markers read (for your own classifier markers). */
  extraHeaders?: string[];
  /**
   * The per-site classifier settings used to decide whether an answer is a block
   * (packages/crawler/src/events/config.ts).
   */
  classifierConfig?: SiteClassifierConfigInput;
}

export const DEFAULTS = {
  retireStatuses: [401, 403, 429],
  retireOutcomes: ['challenge', 'hard_block', 'soft_block'] as Outcome[],
  throwOnBlocked: true,
  throwOnServerError: true,
  pauseDelayMs: 5_000,
  gateWaitMs: 5_000,
  unknownSite: 'crawl' as const,
};

// Built on the first targetHealth() call, not at load (../lazy.ts).
const optionsSchema = lazy(() => {
  const fn = (what: string) =>
    z.custom<(...args: never[]) => unknown>((f) => typeof f === 'function', `must be a function ${what}`);
  const ms = z
    .number()
    .int('must be a whole number of milliseconds')
    .min(0, 'must be at least 0')
    .max(600_000, 'must be at most 600000 (10 minutes)');
  return z.strictObject({
    recorder: z.custom<Recorder>(
      (r) =>
        typeof r === 'object' &&
        r !== null &&
        typeof (r as Recorder).record === 'function' &&
        typeof (r as Recorder).drain === 'function',
      'must be a Recorder (createRecorder(...) from target-health/recorder)',
    ),
    controls: z
      .custom<ControlsView>(
        (c) =>
          typeof c === 'object' &&
          c !== null &&
          typeof (c as ControlsView).controlsFor === 'function' &&
          typeof (c as ControlsView).onChange === 'function',
        'must be a ControlsView (controlsFor(site) and onChange(listener))',
      )
      .optional(),
    routeOf: fn('(proxyInfo, session) => route').optional(),
    pageTypeOf: fn('(request) => page type').optional(),
    retireSessionOn: z
      .union(
        [
          z.literal(false),
          z.strictObject({
            statuses: z
              .array(z.number().int().min(100).max(999), 'must be a list of HTTP status codes like [403, 429]')
              .optional(),
            outcomes: z.array(z.enum(OUTCOMES), `must be a list of outcomes (${OUTCOMES.join(', ')})`).optional(),
          }),
        ],
        'must be false or {statuses?: number[], outcomes?: string[]}',
      )
      .optional(),
    throwOnBlocked: z.boolean('must be true or false').optional(),
    throwOnServerError: z.boolean('must be true or false').optional(),
    pauseDelayMs: ms.optional(),
    gateWaitMs: ms.optional(),
    unknownSite: z.enum(['crawl', 'pause'], 'must be "crawl" or "pause"').optional(),
    extraHeaders: z
      .array(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be header names like "x-cache"'))
      .optional(),
    classifierConfig: z.record(z.string(), z.unknown()).optional(),
  });
});

/** Throws one line naming the option and the fix. */
export function checkOptions(options: unknown): asserts options is TargetHealthOptions {
  const parsed = optionsSchema().safeParse(options);
  if (parsed.success) return;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') throw new Error(`targetHealth: ${issue.keys.join(', ')}: unknown option`);
  throw new Error(`targetHealth: ${issue.path.join('.') || 'options'}: ${issue.message}`);
}
