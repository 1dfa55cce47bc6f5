/**
 * One canary run, without the database: resolve the route, fetch, judge, build the event. The runner
 * (runner.ts) adds scheduling and recording; tests call this directly against local servers.
 */
import { compileClassifier, type Classifier } from '../signals/classify';
import type { SiteClassifierConfigInput } from '../signals/config';
import type { Outcome, RequestOutcomeEventInput } from '../signals/event';
import type { CheckedExpectation } from './check';
import type { CanaryDefinition } from './definition';
import { canaryEvent } from './event';
import { fetchCanaryPage } from './fetch';
import { judgeCanary } from './judge';
import { resolveRoute } from './routes';
import type { CanarySettings } from './settings';
import type { CanaryResultKind } from './types';

export interface RunCanaryInput {
  site: string;
  definition: CanaryDefinition;
  settings: CanarySettings;
  /** Idempotency key of the run; the event id derives from it. */
  runKey: string;
  /** The site's classifier settings (the same as production's); default: built-in markers only. */
  classifier?: Classifier | SiteClassifierConfigInput | undefined;
  signal?: AbortSignal | undefined;
  /** Extra trusted CA (PEM), e.g. a private CA or a test server's certificate. */
  ca?: string | undefined;
}

export interface CanaryRun {
  result: CanaryResultKind;
  reason: string;
  evidence: string;
  outcome: Outcome | null;
  /** The classifier rule that decided `outcome` (docs/classification.md), null when nothing was fetched. */
  rule: string | null;
  checks: CheckedExpectation[];
  route: string;
  countsForSite: boolean;
  status: number | null;
  latencyMs: number | null;
  bytes: number | null;
  ranAt: Date;
  /** Null when nothing was fetched. */
  event: RequestOutcomeEventInput | null;
}

let defaultClassifier: Classifier | undefined;

export async function runCanary(input: RunCanaryInput): Promise<CanaryRun> {
  const { definition, settings } = input;
  const ranAt = new Date();
  const route = resolveRoute(definition, settings.routes);
  if (!route.ok) {
    return {
      result: 'error',
      reason: `configuration: ${route.problem}`,
      evidence: route.problem,
      outcome: null,
      rule: null,
      checks: [],
      route: route.shown,
      countsForSite: false,
      status: null,
      latencyMs: null,
      bytes: null,
      ranAt,
      event: null,
    };
  }
  const fetched = await fetchCanaryPage({
    url: definition.url,
    proxyUrl: route.proxyUrl,
    userAgent: settings.userAgent,
    timeoutMs: definition.timeoutMs ?? settings.timeoutMs,
    connectTimeoutMs: settings.connectTimeoutMs,
    maxBodyBytes: settings.maxBodyBytes,
    signal: input.signal,
    ca: input.ca,
  });
  const classify = classifierOf(input.classifier);
  const verdict = judgeCanary(fetched, definition.expect, classify);
  return {
    result: verdict.result,
    reason: verdict.reason,
    evidence: verdict.evidence,
    outcome: verdict.classification.outcome,
    rule: verdict.classification.rule,
    checks: verdict.checks,
    route: route.shown,
    countsForSite: true,
    status: fetched.kind === 'response' ? fetched.status : null,
    latencyMs: fetched.latencyMs,
    bytes: fetched.kind === 'response' ? fetched.bytes : null,
    ranAt,
    event: canaryEvent({ site: input.site, runKey: input.runKey, ranAt, pool: route.pool, pageType: definition.pageType, fetched, classification: verdict.classification }),
  };
}

function classifierOf(given: Classifier | SiteClassifierConfigInput | undefined): Classifier {
  if (typeof given === 'function') return given;
  if (given !== undefined) return compileClassifier(given);
  return (defaultClassifier ??= compileClassifier());
}
