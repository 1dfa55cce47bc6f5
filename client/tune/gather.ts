/**
 * What `tune` reads of one site (PostgreSQL only): the loop's record over the period — the live loop's band changes
 * where it ran, else a replay with the settings in force (client/loop-record/open.ts, as `review` reads it) — the
 * people's decisions, with whether the site served normally after each resume (the minute rollups against the
 * day's normal, as a review's onset judges it), their marks (incident_marks), the settings changes, and the site's
 * quiet days: whole UTC days with traffic on which the record stayed calm.
 */
import type { SiteHealthConfig } from '../../core/control/config';
import { incidentWindows, labelInputOf } from './label-input';
import type { Pool } from '../../server/db/pool';
import { marksBetween } from '../../server/db/incident-marks';
import { listSettingsChanges } from '../../server/db/settings-changes';
import { dailyBaselines } from '../../tools/charts/series';
import { readDayTotals, readRateBuckets } from '../../tools/charts/read-history';
import { openRecord, storedTicksIn } from '../loop-record/open';
import { settingsInForce } from '../loop-record/settings-in-force';
import { readDecisions } from '../review/gather';
import { normalAt, ONSET_REFUSAL_EXCESS } from '../review/onset';
import { daysWithTraffic } from '../review/quiet-days';
import { MIN_REQUESTS, spanRate } from '../review/refusals';
import { deriveLabels, type Incident, type LabelDecision } from './labels';
import type { TuneOptions } from './run';

const MINUTE = 60_000;
const DAY = 86_400_000;
/** After a resume, the site "served normally" when its refused share over this long is within the normal's band. */
export const RECOVERY_MS = 15 * MINUTE;

export interface Gathered {
  current: SiteHealthConfig;
  settingsFrom: string;
  /** Where the record's ticks came from, in words. */
  recordFrom: string;
  incidents: Incident[];
  /** Quiet days' starts (epoch ms), most recent first. */
  quietDays: number[];
}

/** Whether the site's refused share over [at, at + RECOVERY_MS) was back within its normal's band; null: too thin. */
async function servedNormally(pool: Pool, site: string, at: number): Promise<boolean | null> {
  const to = at + RECOVERY_MS;
  const [buckets, days] = await Promise.all([
    readRateBuckets(pool, site, at, to, { level: 'minute', bucketMs: MINUTE }),
    readDayTotals(pool, site, at, to),
  ]);
  const span = spanRate(buckets, at, to);
  if (span.requests < MIN_REQUESTS || span.rate === null) return null;
  const normal = normalAt(dailyBaselines(days, at, to), at);
  return span.rate < (normal.refusalShare ?? 0) + ONSET_REFUSAL_EXCESS;
}

export async function gather(
  pool: Pool,
  o: Pick<TuneOptions, 'site' | 'from' | 'to' | 'now' | 'quietDays' | 'running'>,
): Promise<Gathered> {
  const period = { from: new Date(o.from), to: new Date(o.to) };
  const inForce = await settingsInForce(pool, o.site, period.to, period, o.running);
  const opened = await openRecord(pool, {
    site: o.site,
    period,
    settingsAt: period.to,
    storedTicks: await storedTicksIn(pool, o.site, period.from, period.to),
    running: o.running,
    now: o.now,
  });
  const record = opened.record;
  const [changes, bandBefore, stored, marks, settings] = await Promise.all([
    record.changes(period.from, period.to),
    record.bandBefore(period.from),
    readDecisions(pool, o.site, period.from, period.to),
    marksBetween(pool, o.site, period.from, period.to),
    listSettingsChanges(pool, o.site),
  ]);
  const decisions: LabelDecision[] = [];
  for (const d of stored)
    decisions.push({
      at: d.at.getTime(),
      kind: d.kind,
      who: d.who,
      why: d.why,
      servedNormallyAfter: d.kind === 'resume' ? await servedNormally(pool, o.site, d.at.getTime()) : null,
    });
  const incidents = deriveLabels(
    labelInputOf({ changes, bandBefore, decisions, marks, settings, end: Math.min(o.to, o.now) }),
  );
  const busy = incidentWindows(incidents);
  const days = await daysWithTraffic(pool, o.site, Math.ceil(o.from / DAY) * DAY, Math.floor(o.to / DAY) * DAY);
  const quietDays = days.filter((day) => !busy.some((w) => w.from < day + DAY && w.to > day)).slice(0, o.quietDays);
  return {
    current: inForce.config,
    settingsFrom: inForce.from,
    recordFrom:
      record.source.kind === 'stored'
        ? 'the live loop’s band changes'
        : `a replay with ${record.source.settingsFrom} (no live ticks in the period)`,
    incidents,
    quietDays,
  };
}
