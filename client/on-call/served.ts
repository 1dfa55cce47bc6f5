/**
 * What a site actually served, in words (pure): the refused events of a period (server/db/served.ts) grouped by
 * what refused them — a vendor's page the classifier recognised by its marker (the deployment's marker
 * catalogue names the vendor), else the rule that classified them — each with its share of the requests since
 * its first refusal and the routes it was served on, so a person reads "93% Cloudflare challenge on every route
 * since 10:02" rather than a rate. The console's Site page shows it with a few recent examples.
 */
import type { RefusalExample, RefusalGroup, RefusedOutcome, ServedRead } from '../../server/db/served';

/** What the catalogue says of a marker id: its vendor and kind, or undefined when it is not (or no longer) in it. */
export type MarkerLookup = (markerId: string) => { vendor: string; kind: string } | undefined;

export interface ServedGroup {
  outcome: RefusedOutcome;
  rule: string;
  markerId: string | null;
  /** The vendor the marker names; null without a marker (or one the catalogue no longer holds). */
  vendor: string | null;
  /** What refused, in words: `Cloudflare challenge`, `hard block: status 403 without a known block page`. */
  what: string;
  count: number;
  /** Share of the requests since the group's first refusal (0–1), null when the rollups hold none. */
  share: number | null;
  since: string;
  last: string;
  /** `on every route`, `on 2 of 5 routes`, or empty (one route only). */
  where: string;
}

export interface ServedSummary {
  from: string;
  to: string;
  requests: number;
  refused: number;
  /** refused / requests, null without requests. */
  share: number | null;
  groups: ServedGroup[];
  examples: Array<RefusalExample & { what: string }>;
}

const OUTCOME_WORDS: Record<RefusedOutcome, string> = {
  hard_block: 'block',
  challenge: 'challenge',
  soft_block: 'block page served with 200',
};

const statusText = (s: RefusalGroup['statuses']): string =>
  s === null ? 'no status' : s.min === s.max ? `status ${s.min}` : `statuses ${s.min}–${s.max}`;

/** Why events without a known marker were refused, by their classification rule. */
function ruleWords(g: Pick<RefusalGroup, 'outcome' | 'rule' | 'statuses' | 'markerId'>): string {
  const outcome = g.outcome.replace('_', ' ');
  switch (g.rule) {
    case 'explicit':
      return `${outcome} as the crawler reported it`;
    case 'status':
      return `${outcome}: ${statusText(g.statuses)} without a known block page`;
    case 'status_override':
      return `${outcome}: ${statusText(g.statuses)} (the site's status override)`;
    case 'size_norm':
      return `${outcome}: pages far smaller than the site's normal`;
    case 'empty_extraction':
      return `${outcome}: pages the parser found empty`;
    default:
      return g.markerId === null
        ? `${outcome} (${g.rule})`
        : `${outcome} (marker ${g.markerId}, no longer in the marker catalogue)`;
  }
}

/** What refused, in words: the marker's vendor and the outcome, else the rule's own words. */
export function refusalWhat(
  g: Pick<RefusalGroup, 'outcome' | 'rule' | 'statuses' | 'markerId'>,
  lookup: MarkerLookup,
): { what: string; vendor: string | null } {
  const marker = g.markerId === null ? undefined : lookup(g.markerId);
  if (marker === undefined) return { what: ruleWords(g), vendor: null };
  const vendor = marker.vendor === 'generic' ? null : marker.vendor;
  return { what: `${vendor ?? 'a'} ${OUTCOME_WORDS[g.outcome]}`, vendor };
}

/** `on every route`, `on 2 of 5 routes`, or nothing when the site had one route. */
export function routesWhere(routes: number, total: number): string {
  if (total <= 1) return '';
  return routes >= total ? 'on every route' : `on ${routes} of ${total} routes`;
}

export function summariseServed(read: ServedRead, lookup: MarkerLookup): ServedSummary {
  const requests = read.minutes.reduce((n, m) => n + m.requests, 0);
  const refused = read.groups.reduce((n, g) => n + g.count, 0);
  const since = (at: Date): number => {
    const minute = Math.floor(at.getTime() / 60_000) * 60_000;
    return read.minutes.reduce((n, m) => (m.t >= minute ? n + m.requests : n), 0);
  };
  return {
    from: read.from.toISOString(),
    to: read.to.toISOString(),
    requests,
    refused,
    share: requests === 0 ? null : Math.min(1, refused / requests),
    groups: read.groups.map((g) => {
      const after = since(g.first);
      return {
        outcome: g.outcome,
        rule: g.rule,
        markerId: g.markerId,
        ...refusalWhat(g, lookup),
        count: g.count,
        share: after === 0 ? null : Math.min(1, g.count / after),
        since: g.first.toISOString(),
        last: g.last.toISOString(),
        where: routesWhere(g.routes, Math.max(read.routes, g.routes)),
      };
    }),
    examples: read.examples.map((e) => ({
      ...e,
      what: refusalWhat({ ...e, statuses: e.status === null ? null : { min: e.status, max: e.status } }, lookup).what,
    })),
  };
}

/** `93%` of a share, `<1%` for a few, `—` for none known. */
export function shareText(share: number | null): string {
  if (share === null) return '—';
  const p = Math.round(share * 100);
  return p === 0 && share > 0 ? '<1%' : `${p}%`;
}

/**
 * A group in one line:
 * `93% Cloudflare challenge (marker cloudflare-mitigated-header) on every route since 10:02 UTC (1240 requests)`.
 */
export function servedLine(g: ServedGroup): string {
  const marker = g.markerId === null || g.what.includes(g.markerId) ? '' : ` (marker ${g.markerId})`;
  return (
    `${shareText(g.share)} ${g.what}${marker}${g.where === '' ? '' : ` ${g.where}`} since ` +
    `${g.since.slice(11, 16)} UTC (${g.count} request${g.count === 1 ? '' : 's'})`
  );
}
