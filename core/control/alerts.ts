/**
 * The alerts that stand beside a band's reasons (pure): a route alert (failures concentrate in a route, which is
 * set aside from the score) and a parser alert (extraction fails: the parser owner's business). The loop raises them
 * as notifications (core/control/plan/routes.ts, parser.ts); `review` and `history` read them back
 * (server/db/notifications.ts `alertsBetween`) so "did the reasons point at the real cause" sees them.
 */
import { z } from 'zod';

export const ALERT_KINDS = ['route_alert', 'parser_health'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export const alertSchema = z.object({
  at: z.string(),
  kind: z.enum(ALERT_KINDS),
  /** What it said, without the site's name in front (`route problem — pool=dc-3 …`). */
  text: z.string(),
});
export type AlertRow = z.output<typeof alertSchema>;

const LABEL: Record<AlertKind, string> = { route_alert: 'route alert', parser_health: 'parser alert' };

/** `route alert`, `parser alert`. */
export const alertLabel = (kind: AlertKind): string => LABEL[kind];

/** One stored alert as the review and `history` show it: the title without its `<site>: ` prefix. */
export function alertRow(a: { at: Date; kind: AlertKind; title: string | null }, site: string): AlertRow {
  const title = a.title ?? '';
  const text = title.startsWith(`${site}: `) ? title.slice(site.length + 2) : title;
  return { at: a.at.toISOString(), kind: a.kind, text: text || alertLabel(a.kind) };
}

/** `route alert: route problem — pool=dc-3 …`. */
export const alertLine = (a: AlertRow): string =>
  a.text === alertLabel(a.kind) ? a.text : `${alertLabel(a.kind)}: ${a.text}`;
