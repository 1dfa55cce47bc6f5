/**
 * Live reconfiguration of a running loop (the `configure` update, `target-health configure`): the
 * update's payload, validated with zod in the update's validator; the settings it names merged into the
 * loop's current settings and the result validated as a whole (so `policy.concurrency.floor` is checked
 * against the nominal the loop actually has); and what changed, field by field (old → new), for the
 * answer and the audit row. Pure: the workflow, the activity and the CLI share it.
 */
import { z } from 'zod';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { type SiteHealthConfig, siteHealthConfigSchema } from './config';
import { whoSchema, whySchema } from './decisions';

/** A setting's value as the change list shows it: every leaf of the settings is one of these. */
export type SettingValue = string | number | boolean | null;

/** One changed field: a settings path (`policy.concurrency.nominal`) or `owner` / `parserOwner`. */
export interface SettingChange {
  field: string;
  old: SettingValue;
  new: SettingValue;
}

/** What the `configure` update answers once the change is applied (and recorded). */
export interface ConfigureResult {
  site: string;
  /** Idempotency key of the change (core/control/keys.ts `settingsChangeKey`). */
  changeKey: string;
  /** Database time of the audit row; null when nothing changed (nothing is recorded then). */
  changedAt: string | null;
  /** Every field that changed, settings and owners; empty when the loop already had these settings. */
  changes: SettingChange[];
  /** The loop's tick interval from now on, and the slot of its next tick (workflow time, ISO). */
  tickIntervalMs: number;
  nextTickAt: string | null;
  message: string;
}

// Contacts are shown on one line (status, notifications) and stored as text: no control characters,
// no line separators, no broken Unicode.
// eslint-disable-next-line no-control-regex
const NOT_ONE_LINE = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;
const contact = (example: string) => {
  const error = `expected a contact on one line, e.g. "${example}"`;
  return z
    .string({ error })
    .trim()
    .min(1, { error })
    .max(200, { error: 'at most 200 characters' })
    .refine((text) => isWellFormed(text) && !NOT_ONE_LINE.test(text), { error });
};

const SETTINGS_EXAMPLE = '{"tickIntervalMs": 30000, "policy": {"concurrency": {"nominal": 8}}}';

/**
 * `{"who", "why"?, "settings"?: {…}, "owner"?, "parserOwner"?}`. `settings` holds any of the loop's
 * settings (docs/control-loop.md "Configuration"), nested like the start input; only the fields given
 * change, the others keep their current values.
 */
const CONFIGURE_PAYLOAD_SCHEMA = z.strictObject({
  who: whoSchema(),
  why: whySchema().optional(),
  settings: z
    .record(z.string(), z.unknown(), { error: `expected a JSON object of settings like ${SETTINGS_EXAMPLE}` })
    .optional(),
  owner: contact('crawl-team@example.com').optional(),
  parserOwner: contact('parser-team@example.com').optional(),
});
/** What a client sends. */
export type ConfigureInput = z.input<typeof CONFIGURE_PAYLOAD_SCHEMA>;

/** A validated change: the loop's settings as they will be, and the owners to set. */
export interface SettingsChangeRequest {
  who: string;
  why: string | null;
  settings: SiteHealthConfig;
  owners: { owner?: string; parserOwner?: string };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `patch` laid over `base`: nested objects are merged key by key, anything else given replaces. Built
 * with own properties only (a `__proto__` key stays a key, which the strict schema then refuses).
 */
export function mergeSettings(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const keys = [...new Set([...Object.keys(base), ...Object.keys(patch)])];
  return Object.fromEntries(
    keys.map((key) => {
      const b = Object.hasOwn(base, key) ? base[key] : undefined;
      if (!Object.hasOwn(patch, key)) return [key, b];
      const p = patch[key];
      return [key, isPlainObject(p) && isPlainObject(b) ? mergeSettings(b, p) : p];
    }),
  );
}

function leaves(value: unknown, path: string, out: Map<string, SettingValue>): Map<string, SettingValue> {
  if (isPlainObject(value)) {
    for (const [key, v] of Object.entries(value)) leaves(v, path === '' ? key : `${path}.${key}`, out);
  } else if (
    value === undefined ||
    value === null ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  ) {
    out.set(path, value ?? null);
  } else {
    out.set(path, JSON.stringify(value));
  }
  return out;
}

/** Every settings field and its value (`policy.concurrency.floor`: 1), in the settings' order, `site` left out. */
export function settingFields(config: SiteHealthConfig): Array<{ field: string; value: SettingValue }> {
  return [...leaves(config, '', new Map())].filter(([f]) => f !== 'site').map(([field, value]) => ({ field, value }));
}

/** Every settings field whose value differs between `before` and `after`, in the settings' order. */
export function settingsChanges(before: SiteHealthConfig, after: SiteHealthConfig): SettingChange[] {
  const old = leaves(before, '', new Map());
  const now = leaves(after, '', new Map());
  const fields = [...new Set([...old.keys(), ...now.keys()])].filter((f) => f !== 'site');
  return fields.flatMap((field) => {
    const o = old.get(field) ?? null;
    const n = now.get(field) ?? null;
    return o === n ? [] : [{ field, old: o, new: n }];
  });
}

const PAYLOAD_EXAMPLE = `{"who": "alice@example.com", "settings": ${SETTINGS_EXAMPLE}}`;

/**
 * Payload → the loop's settings as they will be, or one line naming the field (`configure:
 * settings.policy.concurrency.floor: must not exceed concurrency.nominal (4)`). `current` is what the
 * loop will have when this change is applied (its settings after the changes already queued).
 */
export function parseSettingsChange(
  current: SiteHealthConfig,
  payload: unknown,
): { ok: true; change: SettingsChangeRequest } | { ok: false; message: string } {
  if (!isPlainObject(payload))
    return { ok: false, message: `configure: expected a JSON object like ${PAYLOAD_EXAMPLE}` };
  const parsed = CONFIGURE_PAYLOAD_SCHEMA.safeParse(payload);
  if (!parsed.success) return { ok: false, message: `configure: ${formatIssues(parsed.error)}` };
  const { who, why, settings = {}, owner, parserOwner } = parsed.data;
  if (Object.keys(settings).length === 0 && owner === undefined && parserOwner === undefined) {
    return {
      ok: false,
      message: `configure: nothing to change: give settings (e.g. ${SETTINGS_EXAMPLE}), owner or parserOwner`,
    };
  }
  if (Object.hasOwn(settings, 'site'))
    return {
      ok: false,
      message: "configure: settings.site: a loop's site cannot change; start a loop for the other site instead",
    };
  const merged = siteHealthConfigSchema().safeParse(mergeSettings(current, settings));
  if (!merged.success)
    return { ok: false, message: `configure: ${formatIssues(merged.error, { prefix: 'settings' })}` };
  return {
    ok: true,
    change: {
      who,
      why: why ?? null,
      settings: merged.data,
      owners: { ...(owner === undefined ? {} : { owner }), ...(parserOwner === undefined ? {} : { parserOwner }) },
    },
  };
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const configurePayloadSchema = (): typeof CONFIGURE_PAYLOAD_SCHEMA => CONFIGURE_PAYLOAD_SCHEMA;
