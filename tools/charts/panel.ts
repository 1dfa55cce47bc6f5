/** One panel of the chart's vertical stack, as Vega-Lite types it (a view of `vconcat`). */
import type { TopLevelSpec } from 'vega-lite';

export type Panel = Extract<TopLevelSpec, { vconcat: unknown }>['vconcat'][number];
