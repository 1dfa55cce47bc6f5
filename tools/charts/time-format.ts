/**
 * The chart's one way of writing a time: UTC, `YYYY-MM-DD HH:MM` in the title and tooltips, `HH:MM` on the
 * axes with the date under the first tick and under each midnight. Vega's defaults (`Tue 24`, `03 PM`, in the
 * machine's zone) and the ISO strings beside them made people work out which hour a mark was at.
 */

/** `2026-11-24 10:02`, always UTC (the reader is told so once, in the subtitle). */
export function utcMinute(t: number): string {
  return new Date(t).toISOString().slice(0, 16).replace('T', ' ');
}

/**
 * Vega's label expression for a time axis: `HH:MM`, and beside it the date where a UTC day begins and at the
 * first tick (so a chart that starts mid-day still names its day) — under the time on a bottom axis, over it
 * on a top one, so the date is always on the line away from the plot. `datum.index` is the tick's place on the
 * axis, 0 for the first. Vega evaluates it in UTC (utcFormat), whatever the machine's zone.
 */
export function timeLabelExpr(orient: 'top' | 'bottom'): string {
  const time = "utcFormat(datum.value, '%H:%M')";
  const date = `datum.index === 0 || ${time} === '00:00' ? utcFormat(datum.value, '%Y-%m-%d') : ''`;
  return orient === 'bottom' ? `[${time}, ${date}]` : `[${date}, ${time}]`;
}

/** The x encoding every panel shares: the period, a UTC scale, and the one label format. */
export function timeX(from: number, to: number, axis: { orient: 'top' | 'bottom'; labels: boolean }) {
  return {
    field: 't',
    type: 'temporal' as const,
    title: null,
    scale: { type: 'utc' as const, domain: [from, to], nice: false },
    axis: {
      orient: axis.orient,
      labels: axis.labels,
      labelExpr: timeLabelExpr(axis.orient),
      // About eight ticks leave each label its width (a date is ~70 px) on a 1,000-pixel panel, so Vega's
      // overlap removal, which would drop every other label and with it a midnight's date, stays idle.
      tickCount: 8,
      labelOverlap: true as const,
      labelPadding: 4,
    },
  };
}
