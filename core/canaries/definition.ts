/**
 * Canary definitions: one page per canary whose correct answer we know, the route it travels, what it
 * must show, and how often to check. Validated completely when defined (zod for shape, then the
 * checks zod cannot do: every string storable, selectors compile, patterns compile on the linear-time
 * engine, the URL is one canaries may reach and carries no credentials, proxy URLs have a host and a
 * port, route labels exist, intervals are positive), so nothing malformed ever reaches the store or the
 * loop. Errors are one line each: `field: what is wrong; how to fix it`.
 */
import { z } from 'zod';
import { cutText, isWellFormed } from '@target-health/crawler/events/well-formed';
import {
  describeValue,
  expecting,
  formatPath,
  issueLines,
  messageLine,
} from '@target-health/crawler/events/zod-issues';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { formatDurationMs, parseDurationMs } from './duration';
import {
  type Expectation,
  type ExpectationChecks,
  type ExpectationJson,
  expectationToJson,
  parseExpectation,
} from './expectation';
import type { SelectorCheck } from './html-document';
import { pageCredentialsProblem, redactPageUrl } from './page-url';
import { checkProxyUrl } from './proxy-url';
import { type ReachPolicy, urlReachProblem } from './reach';
import { ROUTE_LABEL, ROUTE_LABEL_HELP, type RouteTable } from './routes';

export const CANARY_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const NAME_HELP = '1-64 lower-case letters, digits and . _ - (e.g. "price-trailrunner")';

export const INTERVAL_LIMITS = {
  /** Canaries are a few polite fetches per site, not a load test. */
  minMs: 30_000,
  maxMs: 7 * 86_400_000,
  defaultMs: 15 * 60_000,
} as const;
export const TIMEOUT_LIMITS = { minMs: 100, maxMs: 120_000 } as const;
export const MAX_EXPECTATIONS = 50;
export const MAX_CANARIES_PER_FILE = 1_000;

export interface CanaryDefinition {
  name: string;
  url: string;
  /** A proxy URL used as is (may carry credentials; prefer `route`). */
  proxy?: string;
  /** A route label resolved through TARGET_HEALTH_ROUTES when the canary runs. */
  route?: string;
  intervalMs: number;
  /** Overrides TARGET_HEALTH_CANARY_TIMEOUT_MS for this page. */
  timeoutMs?: number;
  /** Page type for the request-outcome event (size norms are per page type). */
  pageType?: string;
  expect: Expectation[];
}

/** The JSON form: what people write, what PostgreSQL stores, what `canary list --json` prints. */
export interface CanaryDefinitionJson {
  name: string;
  url: string;
  proxy?: string;
  route?: string;
  interval: string;
  timeout?: string;
  pageType?: string;
  expect: ExpectationJson[];
}

export interface CanaryEntry {
  site: string;
  definition: CanaryDefinition;
}

/** A canary's id: `<site>/<name>`, readable in logs and stable across edits. */
export function canaryId(site: string, name: string): string {
  return `${site}/${name}`;
}

const duration = (what: string) =>
  z.union([z.string(), z.number()], expecting(`${what} like "15m", "1h" or a number of seconds`));

const definitionShape = {
  name: z
    .string(expecting(`a name of ${NAME_HELP}`))
    .regex(CANARY_NAME, expecting(`a name of ${NAME_HELP}`))
    .optional(),
  url: z.string(expecting('the http:// or https:// URL of a page whose answer you know')),
  proxy: z.string(expecting('a proxy URL like "http://host:port"')).optional(),
  route: z
    .string(expecting(`a route label of ${ROUTE_LABEL_HELP}`))
    .regex(ROUTE_LABEL, expecting(`a route label of ${ROUTE_LABEL_HELP}`))
    .optional(),
  interval: duration('a duration').optional(),
  timeout: duration('a duration').optional(),
  pageType: z
    .string(expecting('a page type like "product"'))
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/,
      expecting('a page type of 1-64 letters, digits and . _ : / - like "product"'),
    )
    .optional(),
  expect: z
    .array(z.unknown(), expecting('a list of checks like [{"status": 200}, {"css": ".price", "equals": "$139.95"}]'))
    .min(1, 'needs at least one check, e.g. [{"css": ".price", "equals": "$139.95"}]')
    .max(MAX_EXPECTATIONS, `has more than ${MAX_EXPECTATIONS} checks; split the page into several canaries`),
};
const DEFINITION_FIELDS = Object.keys(definitionShape);
const definitionSchema = z.strictObject(
  definitionShape,
  expecting('a canary object like {"url": "https://…", "expect": [...]}'),
);
const entrySchema = z.strictObject(
  { site: z.string(expecting('a site like "shop.example.com"')), ...definitionShape },
  expecting('a canary object with a "site"'),
);
const fileSchema = z.strictObject(
  {
    canaries: z
      .array(z.unknown(), expecting('a list of canaries, each with a "site"'))
      .max(MAX_CANARIES_PER_FILE, `has more than ${MAX_CANARIES_PER_FILE} canaries; split the file`),
  },
  expecting('an object like {"canaries": [{"site": "shop.example.com", "url": "https://…", "expect": [...]}]}'),
);

/** How a definition is checked when someone defines it (`canary add`, `canary import`). */
export interface DefinitionOptions {
  /**
   * Compiles CSS selectors with the engine that evaluates them (server/canary-runner/html.ts `selectorProblem`).
   * Required: a definition is never accepted with unchecked selectors.
   */
  selectorProblem: SelectorCheck;
  /** Route labels known to this process; undefined skips the label check. */
  routes?: RouteTable;
  /** What canaries may reach (core/canaries/reach.ts); undefined skips the check. */
  reach?: ReachPolicy;
  /** The canary's site, for the reach policy's host rule (a config file names each entry's site itself). */
  site?: string;
}

/** Internal: the defining checks, or none of the engine- and environment-dependent ones (stored rows). */
type Checks = ({ kind: 'define' } & DefinitionOptions) | { kind: 'stored' };

export type DefinitionResult = { ok: true; definition: CanaryDefinition } | { ok: false; errors: string[] };

/** Validates one canary (the shape of `canary add --file`). `path` prefixes fields in errors. */
export function parseCanaryDefinition(input: unknown, options: DefinitionOptions, path = ''): DefinitionResult {
  return parseDefinition(input, { kind: 'define', ...options }, path);
}

/**
 * Reads back a definition stored by {@link parseCanaryDefinition} (its JSON form): the shape is checked
 * again (a guard against hand edits), but not what depends on an engine or on this process's environment
 * (selectors, patterns, route labels, reach) — those were checked when it was written, and the runner
 * checks patterns, routes and reach again before every fetch. So a stored canary never becomes unreadable
 * because the environment changed, which would stop its site's loop.
 */
export function readStoredDefinition(json: unknown): DefinitionResult {
  return parseDefinition(json, { kind: 'stored' }, '');
}

function parseDefinition(input: unknown, checks: Checks, path: string): DefinitionResult {
  const deep = nestingProblem(input, path);
  if (deep !== undefined) return { ok: false, errors: [errorLine(deep)] };
  const strings = illFormedStrings(input, path);
  const parsed = definitionSchema.safeParse(input);
  if (!parsed.success)
    return {
      ok: false,
      errors: [...strings, ...issuesAt(parsed.error.issues, path, DEFINITION_FIELDS)].map(errorLine),
    };
  const checked = checkDefinition(parsed.data, checks, path, checks.kind === 'define' ? checks.site : undefined);
  if (strings.length === 0) return checked.ok ? checked : { ok: false, errors: checked.errors.map(errorLine) };
  return { ok: false, errors: [...strings, ...(checked.ok ? [] : checked.errors)].map(errorLine) };
}

/** Longest refusal line. Echoes of input are capped where they are made; this bounds the rest. */
const MAX_ERROR_LINE = 1_000;

/**
 * A refusal as one bounded line: the CSS selector and RE2 engines quote input raw in their own
 * messages (a line break in a pattern would break the line), so every line passes through here.
 */
function errorLine(line: string): string {
  return messageLine(line, MAX_ERROR_LINE);
}

export type FileResult = { ok: true; entries: CanaryEntry[] } | { ok: false; errors: string[] };

/** Validates a config file holding many sites' canaries: `{"canaries": [{"site": …, …}]}`. */
export function parseCanaryFile(input: unknown, options: DefinitionOptions): FileResult {
  const file = fileSchema.safeParse(input);
  if (!file.success) return { ok: false, errors: issuesAt(file.error.issues, '', ['canaries'], 'file').map(errorLine) };
  const checks: Checks = { kind: 'define', ...options };
  const errors: string[] = [];
  const entries: CanaryEntry[] = [];
  const seen = new Map<string, number>();
  file.data.canaries.forEach((raw, i) => {
    const path = `canaries[${i}]`;
    const deep = nestingProblem(raw, path);
    if (deep !== undefined) {
      errors.push(deep);
      return;
    }
    const strings = illFormedStrings(raw, path);
    errors.push(...strings);
    const entry = entrySchema.safeParse(raw);
    if (!entry.success) {
      errors.push(...issuesAt(entry.error.issues, path, ['site', ...DEFINITION_FIELDS]));
      return;
    }
    const { site: rawSite, ...definition } = entry.data;
    const site = tryNormaliseSite(rawSite);
    if (!site.ok) errors.push(`${path}.site: ${site.error.message}`);
    const checked = checkDefinition(definition, checks, path, site.ok ? site.site : undefined);
    if (!checked.ok) errors.push(...checked.errors);
    if (!site.ok || !checked.ok || strings.length > 0) return;
    const id = canaryId(site.site, checked.definition.name);
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      errors.push(
        `${path}.name: "${checked.definition.name}" is already used by canaries[${earlier}] for ${site.site}; ` +
          `give each canary of a site its own name`,
      );
      return;
    }
    seen.set(id, i);
    entries.push({ site: site.site, definition: checked.definition });
  });
  return errors.length > 0 ? { ok: false, errors: errors.map(errorLine) } : { ok: true, entries };
}

type ShapeOutput = z.output<typeof definitionSchema>;

function checkDefinition(data: ShapeOutput, checks: Checks, path: string, site: string | undefined): DefinitionResult {
  const errors: string[] = [];
  const field = (name: string) => (path === '' ? name : `${path}.${name}`);
  const options: Partial<DefinitionOptions> = checks.kind === 'define' ? checks : {};

  const url = checkPageUrl(data.url, checks.kind === 'define');
  if (url !== undefined) errors.push(`${field('url')}: ${url}`);
  else if (options.reach !== undefined) {
    const reach = urlReachProblem(data.url, site, options.reach);
    if (reach !== undefined) errors.push(`${field('url')}: ${reach}`);
  }

  if (data.proxy !== undefined && data.route !== undefined) {
    errors.push(`${field('route')}: give either proxy (a URL) or route (a label), not both`);
  }
  let proxy: string | undefined;
  if (data.proxy !== undefined) {
    const check = checkProxyUrl(data.proxy);
    if (check.ok) proxy = check.url;
    else errors.push(`${field('proxy')}: ${check.problem}`);
  }
  if (data.route !== undefined && options.routes !== undefined && !options.routes.has(data.route)) {
    const known = [...options.routes.keys()];
    errors.push(
      `${field('route')}: unknown route label "${data.route}"; ` +
        (known.length > 0
          ? `labels in TARGET_HEALTH_ROUTES: ${known.join(', ')}`
          : 'TARGET_HEALTH_ROUTES defines no labels; set it to a JSON object like {"residential-de": ' +
            '"http://host:port"} or use proxy'),
    );
  }

  const intervalMs =
    checkDuration(data.interval, field('interval'), INTERVAL_LIMITS, errors) ?? INTERVAL_LIMITS.defaultMs;
  const timeoutMs = checkDuration(data.timeout, field('timeout'), TIMEOUT_LIMITS, errors);

  const expectationChecks: ExpectationChecks = {
    selectorProblem: options.selectorProblem,
    patterns: checks.kind === 'define',
  };
  const expect: Expectation[] = [];
  data.expect.forEach((raw, i) => {
    const result = parseExpectation(raw, field(`expect[${i}]`), expectationChecks);
    if (result.ok) expect.push(result.expectation);
    else errors.push(...result.errors);
  });
  if (expect.filter((e) => e.kind === 'status').length > 1)
    errors.push(`${field('expect')}: has more than one status check; list the codes in one: {"status": [200, 203]}`);

  if (errors.length > 0) return { ok: false, errors };
  const definition: CanaryDefinition = { name: data.name ?? nameFromUrl(data.url), url: data.url, intervalMs, expect };
  if (proxy !== undefined) definition.proxy = proxy;
  if (data.route !== undefined) definition.route = data.route;
  if (timeoutMs !== undefined) definition.timeoutMs = timeoutMs;
  if (data.pageType !== undefined) definition.pageType = data.pageType;
  return { ok: true, definition };
}

/** URLs are echoed in refusals up to this many characters (a long query cut, the host kept). */
const MAX_URL_ECHO = 200;

/**
 * What is wrong with a page URL, quoting it without its secrets (core/canaries/page-url.ts). Credentials
 * (`user:password@`) are refused when a canary is defined; a stored URL that has them (defined before
 * this rule) is still read back, so listing and running it keep working.
 */
function checkPageUrl(raw: string, defining: boolean): string | undefined {
  const shown = describeValue(redactPageUrl(raw), MAX_URL_ECHO);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${shown} is not a URL; give the full page URL like "https://shop.example.com/p/1"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${shown} must start with http:// or https://`;
  if (url.hostname === '') return `${shown} has no host`;
  return defining ? pageCredentialsProblem(raw, MAX_URL_ECHO) : undefined;
}

function checkDuration(
  raw: string | number | undefined,
  field: string,
  limits: { minMs: number; maxMs: number },
  errors: string[],
): number | undefined {
  if (raw === undefined) return undefined;
  const ms =
    typeof raw === 'number' ? (Number.isFinite(raw) ? Math.round(raw * 1000) : undefined) : parseDurationMs(raw);
  const got = describeValue(raw);
  if (ms === undefined) {
    errors.push(`${field}: ${got} is not a duration; write it like "15m", "1h", "90s" (or a number of seconds)`);
  } else if (ms <= 0) {
    errors.push(`${field}: must be a positive duration like "15m" (got ${got})`);
  } else if (ms < limits.minMs || ms > limits.maxMs) {
    errors.push(
      `${field}: must be between ${formatDurationMs(limits.minMs)} and ${formatDurationMs(limits.maxMs)} (got ${got})`,
    );
  } else {
    return ms;
  }
  return undefined;
}

/** A default name from the URL path: "/p/trailrunner-gtx-4?x=1" → "p-trailrunner-gtx-4". */
export function nameFromUrl(raw: string): string {
  let path = '';
  try {
    path = new URL(raw).pathname;
  } catch {
    path = raw;
  }
  const slug = path
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, 64)
    .replace(/[-._]+$/, '');
  return slug === '' ? 'home' : slug;
}

/** The JSON form of a parsed definition: stored in PostgreSQL and accepted again by the parser. */
export function definitionToJson(d: CanaryDefinition): CanaryDefinitionJson {
  const json: CanaryDefinitionJson = {
    name: d.name,
    url: d.url,
    interval: formatDurationMs(d.intervalMs),
    expect: d.expect.map(expectationToJson),
  };
  if (d.proxy !== undefined) json.proxy = d.proxy;
  if (d.route !== undefined) json.route = d.route;
  if (d.timeoutMs !== undefined) json.timeout = formatDurationMs(d.timeoutMs);
  if (d.pageType !== undefined) json.pageType = d.pageType;
  return json;
}

/** Deepest nesting of a definition's JSON (the definition itself is level 0, an `equals` value starts at 3). */
export const MAX_NESTING = 32;

/**
 * Where the input nests deeper than {@link MAX_NESTING}, as one line, or undefined. Checked first and
 * iteratively: zod's JSON check of an `equals` value recurses, and a few thousand levels overflow the
 * stack (a crash, not a refusal). No page's expected value is that deep.
 */
function nestingProblem(input: unknown, path: string): string | undefined {
  const stack: Array<[unknown, string, number]> = [[input, path, 0]];
  while (stack.length > 0) {
    const [value, at, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_NESTING)
      return (
        `${at === '' || at.startsWith('[') ? `canary${at}` : at}: nests more than ${MAX_NESTING} levels deep; a ` +
        `check compares a value of the page, write a flatter one`
      );
    if (Array.isArray(value)) value.forEach((child, i) => stack.push([child, `${at}[${i}]`, depth + 1]));
    else for (const [key, child] of Object.entries(value)) stack.push([child, formatPath([key], at), depth + 1]);
  }
  return undefined;
}

/**
 * One line per string (value or key, at any depth) that PostgreSQL could not store: NUL or a lone
 * surrogate. Checked before anything else, so such a definition is refused by name instead of failing
 * the insert. Iterative: a deeply nested `equals` value cannot overflow the stack.
 */
function illFormedStrings(input: unknown, path: string): string[] {
  const problems: string[] = [];
  const stack: Array<[unknown, string]> = [[input, path]];
  const report = (at: string, what: string) =>
    problems.push(
      `${at === '' ? 'canary' : at}: ${what} holds a NUL character or half of a surrogate pair, which cannot ` +
        `be stored; remove it or write the text again`,
    );
  while (stack.length > 0 && problems.length < 20) {
    const [value, at] = stack.pop()!;
    if (typeof value === 'string') {
      if (!isWellFormed(value)) report(at, 'the text');
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${at}[${i}]`]);
    } else if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        // Named as the zod formatter names fields: odd keys (empty, spaces, dots, long) quoted and capped.
        const child = formatPath([key], at);
        // Escaped, not cleaned: the person must see where the NUL or the half emoji is.
        if (!isWellFormed(key)) report(at, `the field name ${JSON.stringify(cutText(key, 80))}`);
        else stack.push([(value as Record<string, unknown>)[key], child]);
      }
    }
  }
  return problems;
}

function issuesAt(
  issues: readonly z.core.$ZodIssue[],
  path: string,
  rootFields: readonly string[],
  rootName = 'canary',
): string[] {
  return issueLines(issues, {
    root: path === '' ? rootName : path,
    knownKeys: (p) => (p === '' ? rootFields : undefined),
  }).map((m) => {
    if (path === '' || m.startsWith(`${path}:`)) return m;
    return m.startsWith('[') ? `${path}${m}` : `${path}.${m}`;
  });
}

/** Definitions refused; `errors` are one line each (`field: problem; fix`). Nothing was written. */
export class CanaryDefinitionError extends Error {
  constructor(readonly errors: readonly string[]) {
    super(errors.join('\n'));
    this.name = 'CanaryDefinitionError';
  }
}
