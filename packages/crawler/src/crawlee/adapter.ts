/**
 * The Crawlee adapter: `targetHealth(options)` gives crawler options that record every request attempt
 * and obey the site controls, merged with the user's own (hooks and handlers are wrapped, not replaced).
 *
 * Per attempt:
 *  1. admission (first pre-navigation hook): `stopped` → dropped; paused → waits up to pauseDelayMs for a
 *     resume, then is put back into the queue (DeferredByTargetHealth, not counted as a retry); then a
 *     place under the site's concurrencyLimit (waits up to gateWaitMs, then is put back too);
 *  2. departure (last pre-navigation hook): the controls once more, as the request leaves — a pause or a
 *     stop that came while it waited at the gate or ran the user's hooks puts it back (or drops it)
 *     before anything is sent; then the clock starts (→ first post-navigation hook);
 *  3. the request handler wrapper reads the body, records the event (once, in `finally`, with what the
 *     handler reported through `extraction()`), retires the session of a block and throws as Crawlee
 *     would have; errors before the handler are recorded in errorHandler / failedRequestHandler.
 */
import { performance } from 'node:perf_hooks';
import type { SiteControls } from '../controls/types';
import { classifyOutcome, type Classification } from '../events/classify';
import type { Extraction, Route } from '../events/event';
import { tryNormaliseSite } from '../events/site';
import { BlockedByTargetHealth, DeferredByTargetHealth, DroppedByTargetHealth, HttpErrorStatus } from './errors';
import { buildEvent, checkExtraction, type AttemptFacts } from './event-builder';
import { networkErrorOf } from './network-error';
import { CLASSIFIER_HEADERS, observeBody, responseHead, type BodyObservation, type ResponseHead } from './observe';
import { checkOptions, DEFAULTS, type RequestInfo, type TargetHealthOptions } from './options';
import { routeFromProxyInfo, type ProxyInfoLike } from './route';
import { SiteGate } from './site-gate';

/** What the adapter reads and calls of Crawlee's log (`crawler.log`, `log` of @crawlee/core). */
export interface LogLike {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warning(message: string, data?: Record<string, unknown>): void;
}

/** The part of a Crawlee crawling context the adapter uses (Http, Cheerio and Playwright contexts fit). */
export interface CrawlingContextLike {
  request: RequestInfo & { retryCount: number; noRetry?: boolean; id?: string };
  session?: { id: string; retire(): void } | undefined;
  proxyInfo?: ProxyInfoLike | undefined;
  response?: unknown;
  body?: unknown;
  page?: unknown;
  $?: unknown;
  log: LogLike;
}

type Hook = (ctx: CrawlingContextLike, navigationOptions?: unknown) => unknown;
type Handler = (ctx: CrawlingContextLike) => unknown;
type ErrorHandler = (ctx: CrawlingContextLike, error: Error) => unknown;

/** The crawler options the adapter merges with (those of CheerioCrawler, HttpCrawler and PlaywrightCrawler). */
export interface CrawlerOptionsLike {
  requestHandler?: unknown;
  preNavigationHooks?: readonly unknown[];
  postNavigationHooks?: readonly unknown[];
  errorHandler?: unknown;
  failedRequestHandler?: unknown;
  sessionPoolOptions?: object;
}

/** `http` for CheerioCrawler, HttpCrawler (and other HttpCrawler subclasses); `browser` for PlaywrightCrawler. */
export type CrawlerKind = 'http' | 'browser';

export interface TargetHealthStats {
  /** Events given to the recorder. */
  recorded: number;
  /** Events the recorder could not keep (no room): also counted in recorder.stats().dropped. */
  notKept: number;
  /** Events left unrecorded because they could not be made valid (logged with the reason). */
  unrecordable: number;
  /** Optional fields left out of an event because they were invalid (logged). */
  fieldsRemoved: number;
  /** Attempts put back into the queue because their site was paused. */
  deferredByPause: number;
  /**
   * Of those, attempts already admitted (past the gate) and put back as they were leaving: the pause came
   * while they waited at the gate or ran your pre-navigation hooks. Nothing was sent.
   */
  deferredOnDeparture: number;
  /** Attempts put back because the site's concurrency gate stayed full for gateWaitMs. */
  deferredByGate: number;
  /** Requests dropped because their site is stopped. */
  droppedByStop: number;
  /** Attempts that had to wait for a place under the site's concurrencyLimit. */
  gateWaits: number;
  /** Sessions retired after a block. */
  sessionsRetired: number;
  /** Attempts failed after recording so Crawlee retries them (blocks and 5xx). */
  failedAfterRecording: number;
  /** Attempts that ended without an answer (recorded with a `networkError`: a dead proxy, a timeout…). */
  networkErrors: number;
}

export interface SchedulingHints {
  site: string;
  /** Multiply your revisit intervals by this (1 without controls). */
  revisitMultiplier: number;
  /** What a request to the site costs now, relative to normal (1 without controls). */
  effectiveCostMultiplier: number;
  paused: boolean;
  canaryOnly: boolean;
  stopped: boolean;
  concurrencyLimit: number | undefined;
  /** The record itself (undefined when the controls know nothing of the site). */
  controls: SiteControls | undefined;
}

export interface TargetHealth {
  /** Your crawler options with the adapter's hooks and handlers merged in. */
  crawlerOptions<O extends CrawlerOptionsLike>(options: NoInfer<O>, kind?: CrawlerKind): O;
  /** Reports the extraction result of the current request; call it from your request handler. */
  extraction(ctx: object, extraction: Extraction): void;
  /** The controls of a URL's site, for your scheduler. */
  controlsFor(url: string): SchedulingHints | undefined;
  stats(): TargetHealthStats;
}

interface Attempt {
  site: string;
  canary: boolean;
  ts: number;
  retries: number;
  startedAt?: number;
  endedAt?: number;
  gateHeld: boolean;
  recorded: boolean;
  head?: ResponseHead;
  body?: BodyObservation;
  extraction?: Extraction;
}

const PAGE_TYPE = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
const SERVER_ERRORS = Array.from({ length: 100 }, (_, i) => 500 + i);

function siteOf(url: string): string | undefined {
  try {
    const result = tryNormaliseSite(new URL(url).hostname);
    return result.ok ? result.site : undefined;
  } catch {
    return undefined;
  }
}

export function targetHealth(options: TargetHealthOptions): TargetHealth {
  checkOptions(options);
  const { recorder, controls } = options;
  const pauseDelayMs = options.pauseDelayMs ?? DEFAULTS.pauseDelayMs;
  const gateWaitMs = options.gateWaitMs ?? DEFAULTS.gateWaitMs;
  const unknownSite = options.unknownSite ?? DEFAULTS.unknownSite;
  const throwOnBlocked = options.throwOnBlocked ?? DEFAULTS.throwOnBlocked;
  const throwOnServerError = options.throwOnServerError ?? DEFAULTS.throwOnServerError;
  const retireOn = options.retireSessionOn;
  const retireOutcomes = new Set(retireOn === false ? [] : (retireOn?.outcomes ?? DEFAULTS.retireOutcomes));
  const headerNames = new Set([...CLASSIFIER_HEADERS, ...(options.extraHeaders ?? []).map((h) => h.toLowerCase())]);
  const routeOf = options.routeOf ?? ((proxyInfo: ProxyInfoLike | undefined) => routeFromProxyInfo(proxyInfo));
  const pageTypeOf =
    options.pageTypeOf ??
    ((request: RequestInfo) => (request.label && PAGE_TYPE.test(request.label) ? request.label : undefined));
  const classifierContext = options.classifierConfig ? { config: options.classifierConfig } : {};

  const counts: TargetHealthStats = {
    recorded: 0,
    notKept: 0,
    unrecordable: 0,
    fieldsRemoved: 0,
    deferredByPause: 0,
    deferredOnDeparture: 0,
    deferredByGate: 0,
    droppedByStop: 0,
    gateWaits: 0,
    sessionsRetired: 0,
    failedAfterRecording: 0,
    networkErrors: 0,
  };
  const gate = new SiteGate();
  /** Keyed by the crawling context: Crawlee passes the same object to hooks, handler and error handlers. */
  const attempts = new WeakMap<object, Attempt>();

  const controlsOf = (site: string): SiteControls | undefined => controls?.controlsFor(site);

  /** Resolves true once `ok(controls)` holds for the site, false after `ms` (woken by changes, no polling). */
  function waitForControls(site: string, ms: number, ok: (c: SiteControls | undefined) => boolean): Promise<boolean> {
    if (!controls || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        unsubscribe();
        resolve(value);
      };
      const timer = setTimeout(() => done(false), ms);
      // Listeners are called on later changes, never during onChange() itself (ControlsView's contract).
      const unsubscribe = controls.onChange((changed) => {
        if (siteOf(`http://${changed.site}/`) === site && ok(changed)) done(true);
      });
      // A change applied between the caller's read and the subscription is not missed.
      if (ok(controlsOf(site))) done(true);
    });
  }

  const isPaused = (c: SiteControls | undefined, canary: boolean): boolean => {
    if (c === undefined) return unknownSite === 'pause' && !canary;
    if (c.band === 'stopped') return false;
    return c.paused && !(canary && c.canaryOnly);
  };

  /** A stopped site's request: dropped (not retried), counted and logged. */
  function drop(ctx: CrawlingContextLike, site: string, current: SiteControls): never {
    counts.droppedByStop += 1;
    ctx.request.noRetry = true;
    ctx.log.warning(`target-health: dropped ${ctx.request.url}: ${site} is stopped (${current.reason})`, {
      droppedByStop: counts.droppedByStop,
    });
    throw new DroppedByTargetHealth(site, current.reason);
  }

  /** First pre-navigation hook: drop, defer or admit the attempt. */
  async function admit(ctx: CrawlingContextLike): Promise<void> {
    const { request } = ctx;
    const site = siteOf(request.url);
    if (site === undefined) return; // Not a host we can key (a data: URL…): nothing to obey or record.
    const canary = request.userData.targetHealthCanary === true;
    const attempt: Attempt = {
      site,
      canary,
      ts: Date.now(),
      retries: request.retryCount,
      gateHeld: false,
      recorded: false,
    };
    let current = controlsOf(site);
    if (current?.band === 'stopped') drop(ctx, site, current);
    if (isPaused(current, canary)) {
      const resumed = await waitForControls(site, pauseDelayMs, (c) => !isPaused(c, canary));
      current = controlsOf(site);
      if (!resumed || isPaused(current, canary) || current?.band === 'stopped') {
        counts.deferredByPause += 1;
        throw new DeferredByTargetHealth(
          site,
          'paused',
          current?.reason ?? 'no controls known for the site, unknownSite is "pause"',
        );
      }
    }
    const limit = current?.concurrencyLimit;
    if (limit !== undefined) {
      // A canary goes through a paused site's zero limit: it is how the loop sees whether the site recovered.
      const effective = canary ? Math.max(1, limit) : limit;
      const result = await gate.acquire(site, effective, gateWaitMs);
      if (result.waited) counts.gateWaits += 1;
      if (!result.admitted) {
        counts.deferredByGate += 1;
        throw new DeferredByTargetHealth(site, 'concurrency', `${gate.inFlight(site)} in flight, limit ${effective}`);
      }
      attempt.gateHeld = true;
    }
    attempts.set(ctx, attempt);
  }

  /**
   * Last pre-navigation hook, right before Crawlee sends the request: the controls may have changed since
   * admission (an attempt can wait up to gateWaitMs at the gate, and the user's hooks may take their
   * time), so they are read again — a pause puts the attempt back, a stop drops it, and its gate place is
   * given back either way. Synchronous, so nothing runs between this check and the request going out
   * but Crawlee's own preparation. Then the clock starts.
   */
  function depart(ctx: CrawlingContextLike): void {
    const attempt = attempts.get(ctx);
    if (!attempt) return;
    const current = controlsOf(attempt.site);
    if (current?.band === 'stopped') {
      release(attempt);
      drop(ctx, attempt.site, current);
    }
    if (isPaused(current, attempt.canary)) {
      release(attempt);
      counts.deferredByPause += 1;
      counts.deferredOnDeparture += 1;
      throw new DeferredByTargetHealth(
        attempt.site,
        'paused',
        `${current?.reason ?? 'no controls known for the site, unknownSite is "pause"'}; it came while the ` +
          `request waited to leave`,
      );
    }
    attempt.startedAt = performance.now();
  }

  async function stopTimer(ctx: CrawlingContextLike): Promise<void> {
    const attempt = attempts.get(ctx);
    if (!attempt) return;
    attempt.endedAt = performance.now();
    attempt.head = await responseHead(ctx.response, headerNames);
  }

  function release(attempt: Attempt): void {
    if (attempt.gateHeld) {
      attempt.gateHeld = false;
      gate.release(attempt.site);
    }
  }

  function facts(ctx: CrawlingContextLike, attempt: Attempt, error?: unknown): AttemptFacts {
    const end = attempt.endedAt ?? performance.now();
    const base: AttemptFacts = {
      ts: attempt.ts,
      site: attempt.site,
      route: safeRoute(ctx),
      pageType: safe(() => pageTypeOf(ctx.request)),
      canary: attempt.canary,
      retries: attempt.retries,
      latencyMs: attempt.startedAt === undefined ? 0 : end - attempt.startedAt,
      extraction: attempt.extraction,
    };
    if (attempt.head) return { ...base, status: attempt.head.status, headers: attempt.head.headers, ...attempt.body };
    return {
      ...base,
      networkError: networkErrorOf(error, safe(() => ctx.proxyInfo !== undefined && ctx.proxyInfo !== null) === true),
    };
  }

  function safeRoute(ctx: CrawlingContextLike): Route {
    const route = safe(() => routeOf(ctx.proxyInfo, ctx.session));
    return route ?? {};
  }

  /** Records the attempt once. */
  async function record(ctx: CrawlingContextLike, attempt: Attempt, error?: unknown): Promise<void> {
    if (attempt.recorded) return;
    attempt.recorded = true;
    const f = facts(ctx, attempt, error);
    if (f.networkError !== undefined) counts.networkErrors += 1;
    const built = buildEvent(f);
    if (!built.ok) {
      counts.unrecordable += 1;
      ctx.log.warning(`target-health: not recorded, the event is invalid: ${built.errors.join('; ')}`, {
        url: ctx.request.url,
      });
      return;
    }
    if (built.removed.length > 0) {
      counts.fieldsRemoved += built.removed.length;
      ctx.log.warning(`target-health: recorded without invalid fields: ${built.removed.join('; ')}`, {
        url: ctx.request.url,
      });
    }
    const droppedBefore = recorder.stats().dropped;
    if (recorder.record(built.input)) {
      counts.recorded += 1;
    } else if (recorder.stats().dropped > droppedBefore) {
      counts.notKept += 1;
      ctx.log.warning('target-health: the recorder had no room for the event (recorder.stats().dropped)', {
        url: ctx.request.url,
      });
    } else {
      counts.recorded += 1;
      // Memory and spill are filling up: slow this request down until there is room.
      await recorder.drain();
    }
  }

  function isBlocked(
    status: number,
    classification: Classification | undefined,
    retireStatuses: ReadonlySet<number>,
  ): boolean {
    if (retireStatuses.has(status)) return true;
    return classification !== undefined && retireOutcomes.has(classification.outcome);
  }

  /** The classification of the answer so far (before the handler's extraction), without recording it. */
  function classifyNow(ctx: CrawlingContextLike, attempt: Attempt): Classification | undefined {
    const built = buildEvent(facts(ctx, attempt));
    return built.ok ? classifyOutcome(built.event, classifierContext) : undefined;
  }

  function wrapHandler(
    userHandler: Handler | undefined,
    retireStatuses: ReadonlySet<number>,
    errorStatuses: ReadonlySet<number>,
  ): Handler {
    return async (ctx) => {
      const attempt = attempts.get(ctx);
      if (!attempt || !attempt.head) {
        // skipNavigation requests and sites we do not key: nothing was fetched, nothing to record.
        return userHandler?.(ctx);
      }
      try {
        attempt.body = await observeBody(ctx);
        const { status } = attempt.head;
        if (retireOn !== false) {
          const classification =
            retireStatuses.has(status) || retireOutcomes.size > 0 ? classifyNow(ctx, attempt) : undefined;
          if (isBlocked(status, classification, retireStatuses)) {
            if (ctx.session) {
              ctx.session.retire();
              counts.sessionsRetired += 1;
            }
            if (throwOnBlocked) {
              counts.failedAfterRecording += 1;
              throw new BlockedByTargetHealth(
                status,
                classification?.outcome ?? 'blocked status',
                classification?.reason ?? `status ${status}`,
              );
            }
          }
        }
        if (errorStatuses.has(status)) {
          counts.failedAfterRecording += 1;
          throw new HttpErrorStatus(status, attempt.body.bodySample ?? '');
        }
        return await userHandler?.(ctx);
      } finally {
        // Once per attempt, with the extraction the handler reported, even when it threw.
        await record(ctx, attempt);
        release(attempt);
      }
    };
  }

  function wrapErrorHandler(user: ErrorHandler | undefined, retireStatuses: ReadonlySet<number>): ErrorHandler {
    return async (ctx, error) => {
      if (error instanceof DeferredByTargetHealth) {
        // Crawlee adds a retry after this handler: take it back (a deferral is not a failed try), and keep
        // the session's score (nothing was sent through it).
        ctx.request.retryCount -= 1;
        ctx.session = undefined;
        ctx.log.debug(`target-health: ${error.message}`, { url: ctx.request.url });
        return undefined;
      }
      const attempt = attempts.get(ctx);
      if (attempt) {
        // Sent but not recorded yet: a network error, or an error after the answer arrived (a timeout in
        // the handler, a refused content type). Never sent (a hook of yours threw first): nothing to record.
        if (attempt.startedAt !== undefined) {
          // Crawlee's own first post-navigation hook (its Content-Type check) throws before the adapter's
          // when an answer has no HTML type — a bare `403` with an empty body, as many walls are. The answer
          // arrived all the same: record its status, not a network error, and retire the blocked session.
          if (!attempt.head && ctx.response !== undefined) {
            attempt.endedAt ??= performance.now();
            attempt.head = await responseHead(ctx.response, headerNames);
            if (attempt.head && retireOn !== false && retireStatuses.has(attempt.head.status) && ctx.session) {
              ctx.session.retire();
              counts.sessionsRetired += 1;
            }
          }
          await record(ctx, attempt, error);
        }
        release(attempt);
      }
      return user?.(ctx, error);
    };
  }

  return {
    crawlerOptions<O extends CrawlerOptionsLike>(userOptions: NoInfer<O>, kind: CrawlerKind = 'http'): O {
      const merged = { ...userOptions } as Record<string, unknown>;
      const sessionPool = (userOptions.sessionPoolOptions ?? {}) as { blockedStatusCodes?: number[] };
      const retireStatuses = new Set(
        retireOn === false ? [] : (retireOn?.statuses ?? sessionPool.blockedStatusCodes ?? DEFAULTS.retireStatuses),
      );
      // Crawlee would throw on these before the handler, losing the body: the adapter takes them over.
      merged.sessionPoolOptions = { ...sessionPool, blockedStatusCodes: [] };
      let errorStatuses = new Set<number>();
      if (kind === 'http') {
        const o = userOptions as { ignoreHttpErrorStatusCodes?: number[]; additionalHttpErrorStatusCodes?: number[] };
        const ignored = new Set(o.ignoreHttpErrorStatusCodes ?? []);
        if (throwOnServerError) errorStatuses = new Set(SERVER_ERRORS.filter((s) => !ignored.has(s)));
        for (const s of o.additionalHttpErrorStatusCodes ?? []) errorStatuses.add(s);
        merged.ignoreHttpErrorStatusCodes = [...new Set([...ignored, ...SERVER_ERRORS])];
        merged.additionalHttpErrorStatusCodes = [];
      }
      const userPre = (userOptions.preNavigationHooks ?? []) as Hook[];
      const userPost = (userOptions.postNavigationHooks ?? []) as Hook[];
      // Admission first (a dropped or deferred request runs none of the user's hooks); the departure check
      // and the clock last.
      merged.preNavigationHooks = [admit, ...userPre, depart];
      merged.postNavigationHooks = [stopTimer, ...userPost];
      merged.requestHandler = wrapHandler(
        userOptions.requestHandler as Handler | undefined,
        retireStatuses,
        errorStatuses,
      );
      merged.errorHandler = wrapErrorHandler(userOptions.errorHandler as ErrorHandler | undefined, retireStatuses);
      merged.failedRequestHandler = wrapErrorHandler(
        userOptions.failedRequestHandler as ErrorHandler | undefined,
        retireStatuses,
      );
      return merged as O;
    },

    extraction(ctx: object, extraction: Extraction): void {
      const checked = checkExtraction(extraction);
      const attempt = attempts.get(ctx);
      if (attempt) attempt.extraction = checked;
    },

    controlsFor(url: string): SchedulingHints | undefined {
      const site = siteOf(url) ?? siteOf(`http://${url}/`);
      if (site === undefined) return undefined;
      const c = controlsOf(site);
      return {
        site,
        revisitMultiplier: c?.revisitMultiplier ?? 1,
        effectiveCostMultiplier: c?.effectiveCostMultiplier ?? 1,
        paused: c ? c.paused : unknownSite === 'pause',
        canaryOnly: c?.canaryOnly ?? false,
        stopped: c?.band === 'stopped',
        concurrencyLimit: c?.concurrencyLimit,
        controls: c,
      };
    },

    stats: () => ({ ...counts }),
  };
}

/** A user function that throws must not lose the event: its field is left out. */
function safe<T>(call: () => T): T | undefined {
  try {
    return call();
  } catch {
    return undefined;
  }
}
