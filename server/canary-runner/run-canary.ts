/**
 * One canary run, without the database: resolve the route, check what the definition's environment-
 * dependent parts still allow (patterns, reach), fetch, judge, build the event. The runner (runner.ts)
 * adds scheduling and recording; tests call this directly against local servers.
 */
import type { CheckedExpectation } from '../../core/canaries/check';
import type { CanaryDefinition } from '../../core/canaries/definition';
import { judgeCanary } from '../../core/canaries/judge';
import { pageTextCleaner } from '../../core/canaries/page-url';
import { cutText } from '@target-health/crawler/events/well-formed';
import { patternProblem } from '../../core/canaries/pattern';
import { resolveRoute } from '../../core/canaries/routes';
import type { CanaryResultKind } from '../../core/canaries/types';
import { compileClassifier, type Classifier, type MarkerCatalogue } from '@target-health/crawler/events/classify';
import { deploymentCatalogue } from '../config/marker-catalogue';
import type { SiteClassifierConfigInput } from '@target-health/crawler/events/config';
import type { Outcome, RequestOutcomeEventInput } from '@target-health/crawler/events/event';
import { canaryEvent } from './event';
import { fetchCanaryPage } from './fetch';
import { parseHtml } from './html';
import type { CanarySettings } from './settings';

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

let defaultClassifier: { catalogue: MarkerCatalogue; classifier: Classifier } | undefined;

/**
 * One run; its texts never hold the page URL's secrets, even when the page echoes its own URL
 * (core/canaries/page-url.ts): they are masked after judging, so the verdict is the page's.
 */
export async function runCanary(input: RunCanaryInput): Promise<CanaryRun> {
  return withoutPageSecrets(await judgedRun(input), pageTextCleaner(input.definition.url));
}

/** The run's texts (reason, evidence, checks, the event's reason) passed through `clean`. */
export function withoutPageSecrets(run: CanaryRun, clean: (text: string) => string): CanaryRun {
  const checks = run.checks.map((c) => {
    const out: CheckedExpectation = {
      ...c,
      check: clean(c.check),
      expected: clean(c.expected),
      actual: clean(c.actual),
    };
    if (c.excerpt !== undefined) out.excerpt = clean(c.excerpt);
    return out;
  });
  // The event's reason keeps the schema's 200 characters (a masked value may be longer than it was).
  const event =
    run.event === null || run.event.outcomeReason === undefined
      ? run.event
      : { ...run.event, outcomeReason: cutText(clean(run.event.outcomeReason), 200, '') };
  return { ...run, reason: clean(run.reason), evidence: clean(run.evidence), checks, event };
}

async function judgedRun(input: RunCanaryInput): Promise<CanaryRun> {
  const { definition, settings } = input;
  const ranAt = new Date();
  // Our own configuration, before anything reaches the site: such a run says nothing about the site.
  const configurationError = (problem: string, shown: string, latencyMs: number | null = null): CanaryRun => ({
    result: 'error',
    reason: `configuration: ${problem}`,
    evidence: problem,
    outcome: null,
    rule: null,
    checks: [],
    route: shown,
    countsForSite: false,
    status: null,
    latencyMs,
    bytes: null,
    ranAt,
    event: null,
  });
  const route = resolveRoute(definition, settings.routes);
  if (!route.ok) return configurationError(route.problem, route.shown);
  // Stored rows are read back without engine checks (definition.ts readStoredDefinition): a pattern
  // stored before the linear-time engine, or edited by hand, is refused here instead of run.
  const pattern = runtimePatternProblem(definition);
  if (pattern !== undefined) return configurationError(pattern, route.shown);
  const fetched = await fetchCanaryPage({
    url: definition.url,
    proxyUrl: route.proxyUrl,
    userAgent: settings.userAgent,
    timeoutMs: definition.timeoutMs ?? settings.timeoutMs,
    connectTimeoutMs: settings.connectTimeoutMs,
    maxBodyBytes: settings.maxBodyBytes,
    signal: input.signal,
    ca: input.ca,
    reach: { policy: settings.reach, site: input.site },
  });
  if (fetched.kind === 'refused') return configurationError(fetched.problem, route.shown, fetched.latencyMs);
  const classify = classifierOf(input.classifier);
  const verdict = judgeCanary(fetched, definition.expect, classify, parseHtml);
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
    event: canaryEvent({
      site: input.site,
      runKey: input.runKey,
      ranAt,
      pool: route.pool,
      pageType: definition.pageType,
      fetched,
      classification: verdict.classification,
    }),
  };
}

function runtimePatternProblem(definition: CanaryDefinition): string | undefined {
  for (const [i, e] of definition.expect.entries()) {
    if ((e.kind === 'css' || e.kind === 'json') && e.assert.op === 'matches') {
      const problem = patternProblem(e.assert.pattern, `expect[${i}].matches`);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

/**
 * The site's classifier on the deployment's current marker catalogue (TARGET_HEALTH_MARKERS), as its traffic is
 * classified at ingest.
 */
function classifierOf(given: Classifier | SiteClassifierConfigInput | undefined): Classifier {
  if (typeof given === 'function') return given;
  const catalogue = deploymentCatalogue().current();
  if (given !== undefined) return compileClassifier(given, catalogue);
  if (defaultClassifier?.catalogue !== catalogue)
    defaultClassifier = { catalogue, classifier: compileClassifier({}, catalogue) };
  return defaultClassifier.classifier;
}
