/**
 * Settings from the environment, validated with zod. Every entry point (worker, CLI, local stack)
 * reads its settings through here, so a missing or malformed variable always produces the same kind
 * of one-line error naming the variable and how to fix it.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TASK_QUEUE } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { capText, describeValue, formatIssues } from '@target-health/crawler/events/zod-issues';
import { redactText, redactUrl, urlOrigin } from '../../core/common/redact';

type Env = Record<string, string | undefined>;

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const filePath = z.string().min(1, 'must be a file path');

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const logLevel = z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` });

const temporalEnvSchema = z.object({
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, 'must be host:port, e.g. localhost:7233 or my-ns.tmprl.cloud:7233')
    .default('localhost:7233'),
  TEMPORAL_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, 'must be a namespace name, e.g. default')
    .default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1, 'must not be empty').default(TASK_QUEUE),
  TEMPORAL_TLS: booleanFlag.optional(),
  TEMPORAL_TLS_CERT_PATH: filePath.optional(),
  TEMPORAL_TLS_KEY_PATH: filePath.optional(),
  TEMPORAL_TLS_CA_PATH: filePath.optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().min(1, 'must not be empty when set').optional(),
});

const databaseUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    return (u.protocol === 'postgres:' || u.protocol === 'postgresql:') && u.hostname !== '';
  } catch {
    return false;
  }
}, 'must be a PostgreSQL URL like postgres://user:password@host:5432/database');

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Undefined means plain-text gRPC (local dev server). */
  tls?: {
    serverNameOverride?: string;
    serverRootCACertificate?: Buffer;
    clientCertPair?: { crt: Buffer; key: Buffer };
  };
  apiKey?: string;
}

/** Variables whose values are secrets or may hold one: never echoed whole in an error. */
function isSecretVariable(name: string): boolean {
  return /KEY|TOKEN|SECRET|PASSWORD|WEBHOOK|ROUTES/.test(name) || name === 'DATABASE_URL';
}

/**
 * Turns zod issues into one line: `VARIABLE: what is wrong (got "value")` (packages/crawler/src/events/zod-issues.ts
 * caps the echo).
 */
function formatEnvIssues(error: z.ZodError, env: Env): string {
  return formatIssues(error, {
    root: 'environment',
    detail: (issue) => {
      const name = String(issue.path[0] ?? 'environment');
      const got = env[name];
      // Any other value may still hold a URL with a password (TEMPORAL_UI_URL is refused for exactly that): masked too.
      return got === undefined
        ? 'it is not set'
        : `got ${JSON.stringify(capText(isSecretVariable(name) ? redactSetting(name, got) : redactText(got)))}`;
    },
  });
}

/** Never echo secrets back: keep only the shape of the value (core/common/redact.ts decides what a URL may show). */
function redactSetting(name: string, value: string): string {
  // Webhook URLs (Slack's in particular) carry their secret in the path: the origin only.
  if (name.includes('WEBHOOK')) return urlOrigin(value) === 'an invalid URL' ? '…' : `${urlOrigin(value)}/…`;
  // A URL keeps its shape without the password; anything else (a libpq "host=… password=…" string) only its start.
  if (name === 'DATABASE_URL' && value.includes('//')) return redactUrl(value);
  return value.length > 4 ? `${value.slice(0, 2)}…` : '…';
}

function parseEnv<S extends z.ZodType>(schema: S, env: Env): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) throw new UserError(formatEnvIssues(result.error, env));
  return result.data;
}

function readSettingFile(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UserError(
      `${variable}: cannot read ${describeValue(path, 200)} ` +
        `(${(err as NodeJS.ErrnoException).code ?? String(err)}); point it at a readable PEM file`,
    );
  }
}

export function loadTemporalSettings(env: Env = process.env): TemporalSettings {
  const e = parseEnv(temporalEnvSchema, env);
  if ((e.TEMPORAL_TLS_CERT_PATH === undefined) !== (e.TEMPORAL_TLS_KEY_PATH === undefined)) {
    const missing = e.TEMPORAL_TLS_CERT_PATH === undefined ? 'TEMPORAL_TLS_CERT_PATH' : 'TEMPORAL_TLS_KEY_PATH';
    throw new UserError(`${missing}: mTLS needs both TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH (it is not set)`);
  }
  const wantsTls =
    e.TEMPORAL_TLS ??
    (e.TEMPORAL_TLS_CERT_PATH !== undefined ||
      e.TEMPORAL_API_KEY !== undefined ||
      e.TEMPORAL_TLS_CA_PATH !== undefined);
  if (e.TEMPORAL_TLS === false && (e.TEMPORAL_TLS_CERT_PATH !== undefined || e.TEMPORAL_TLS_CA_PATH !== undefined)) {
    throw new UserError(
      'TEMPORAL_TLS: is false but TLS certificate paths are set (got "false"); remove one or the other',
    );
  }
  const settings: TemporalSettings = {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
  };
  if (wantsTls) {
    settings.tls = {};
    if (e.TEMPORAL_TLS_SERVER_NAME) settings.tls.serverNameOverride = e.TEMPORAL_TLS_SERVER_NAME;
    if (e.TEMPORAL_TLS_CA_PATH)
      settings.tls.serverRootCACertificate = readSettingFile('TEMPORAL_TLS_CA_PATH', e.TEMPORAL_TLS_CA_PATH);
    if (e.TEMPORAL_TLS_CERT_PATH && e.TEMPORAL_TLS_KEY_PATH) {
      settings.tls.clientCertPair = {
        crt: readSettingFile('TEMPORAL_TLS_CERT_PATH', e.TEMPORAL_TLS_CERT_PATH),
        key: readSettingFile('TEMPORAL_TLS_KEY_PATH', e.TEMPORAL_TLS_KEY_PATH),
      };
    }
  }
  if (e.TEMPORAL_API_KEY) settings.apiKey = e.TEMPORAL_API_KEY;
  return settings;
}

/** Our TLS variables and the names the Temporal CLI reads for the same setting (its environment configuration). */
const TLS_NAMES: ReadonlyArray<readonly [ours: string, theirs: string]> = [
  ['TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_PATH'],
  ['TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH'],
  ['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'],
];

/**
 * The environment of the Temporal CLI `target-health temporal …` runs (client/temporal-passthrough.ts): ours, validated
 * (a malformed variable is refused with the line every command gives), with the address and namespace every command
 * uses and our TLS variables under the Temporal CLI's names. A variable already set under the CLI's own name is left as
 * the user set it. Here, beside loadTemporalSettings: this module is the one place that names Temporal's credentials.
 */
export function temporalCliEnv(env: Env): Env {
  const settings = loadTemporalSettings(env);
  const out: Env = { ...env, TEMPORAL_ADDRESS: settings.address, TEMPORAL_NAMESPACE: settings.namespace };
  for (const [ours, theirs] of TLS_NAMES) {
    const value = env[ours];
    if (value !== undefined && value !== '' && (env[theirs] === undefined || env[theirs] === '')) out[theirs] = value;
  }
  // Ours accepts yes/no/1/0; the CLI takes true/false.
  if (env.TEMPORAL_TLS !== undefined && env.TEMPORAL_TLS !== '')
    out.TEMPORAL_TLS = settings.tls === undefined ? 'false' : 'true';
  return out;
}

/** DATABASE_URL is required by the worker and the CLI; only the local stack (`npm start`) embeds one. */
export function loadDatabaseUrl(env: Env = process.env): string {
  const e = parseEnv(
    z.object({
      DATABASE_URL: z
        .string({
          message:
            'is required: set it to postgres://user:password@host:5432/database, or run `npm start` for the ' +
            'embedded stack',
        })
        .pipe(databaseUrl),
    }),
    env,
  );
  return e.DATABASE_URL;
}

/** DATABASE_URL when set (validated), otherwise undefined: the local stack then embeds PostgreSQL. */
export function loadOptionalDatabaseUrl(env: Env = process.env): string | undefined {
  return env.DATABASE_URL === undefined || env.DATABASE_URL === '' ? undefined : loadDatabaseUrl(env);
}

/**
 * TARGET_HEALTH_MARKERS: a deployment's marker file (docs/classification.md "Marker file"), or undefined
 * (built-in markers only; an empty variable counts as unset). The file itself is read by
 * server/config/marker-catalogue.ts, which names this variable in its errors.
 */
export function loadMarkerFilePath(env: Env = process.env): string | undefined {
  if (env.TARGET_HEALTH_MARKERS === undefined || env.TARGET_HEALTH_MARKERS === '') return undefined;
  return parseEnv(
    z.object({ TARGET_HEALTH_MARKERS: filePath.refine((v) => !v.includes('\u0000'), 'must be a file path') }),
    env,
  ).TARGET_HEALTH_MARKERS;
}

export function loadLogLevel(env: Env = process.env): LogLevel {
  return parseEnv(z.object({ LOG_LEVEL: logLevel.default('info') }), env).LOG_LEVEL;
}

const wholeNumber = (min: number, max: number, what: string) =>
  z.coerce
    .number({ message: `must be ${what}` })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/**
 * The minute rollups' retention when nothing else says (server/db/signal-store/retention.ts holds the same default).
 */
export const DEFAULT_MINUTE_DAYS = 3;

/**
 * TARGET_HEALTH_MINUTE_DAYS: how many days of minute rollups the deployment keeps (default 3). Ingest
 * writes minute rows only for the days `target-health retention` keeps (a back-fill's older events go
 * to the hour and day rollups only), and `retention` drops older minute partitions unless told
 * otherwise with `--minute-days`.
 */
export function loadMinuteDays(env: Env = process.env): number {
  if (env.TARGET_HEALTH_MINUTE_DAYS === undefined || env.TARGET_HEALTH_MINUTE_DAYS === '') return DEFAULT_MINUTE_DAYS;
  return parseEnv(
    z.object({
      TARGET_HEALTH_MINUTE_DAYS: wholeNumber(2, 3_650, 'a number of days (2-3650)').default(DEFAULT_MINUTE_DAYS),
    }),
    env,
  ).TARGET_HEALTH_MINUTE_DAYS;
}

const workerTuningSchema = z.object({
  TARGET_HEALTH_WORKER_CACHED_WORKFLOWS: wholeNumber(0, 1_000_000, 'a number of workflows').optional(),
  TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS: wholeNumber(1_000, 600_000, 'a timeout in milliseconds').optional(),
});

/**
 * Worker tuning (docs/operations.md "Worker memory"): how many workflows a worker keeps in its cache
 * (each costs memory; one that is not cached replays its history on its next task), and how long the
 * server waits for the caching worker to take a workflow's next task before any worker may (the sticky
 * queue's schedule-to-start timeout: how soon a dead worker's loops move on).
 */
export interface WorkerTuning {
  maxCachedWorkflows?: number;
  stickyQueueScheduleToStartTimeoutMs?: number;
}

export function loadWorkerTuning(env: Env = process.env): WorkerTuning {
  const e = parseEnv(workerTuningSchema, env);
  return {
    ...(e.TARGET_HEALTH_WORKER_CACHED_WORKFLOWS === undefined
      ? {}
      : { maxCachedWorkflows: e.TARGET_HEALTH_WORKER_CACHED_WORKFLOWS }),
    ...(e.TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS === undefined
      ? {}
      : { stickyQueueScheduleToStartTimeoutMs: e.TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS }),
  };
}

const port = z.coerce
  .number({ message: 'must be a port number' })
  .int('must be a whole number')
  .min(1, 'must be 1-65535')
  .max(65535, 'must be 1-65535');

const localStackSchema = z.object({
  TARGET_HEALTH_DATA_DIR: z.string().min(1).default('data'),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  TARGET_HEALTH_PG_PORT: port.default(54329),
});

export interface LocalStackSettings {
  dataDir: string;
  temporalPort: number;
  temporalUiPort: number;
  postgresPort: number;
}

/** Settings of the embedded local stack (`npm start`). */
export function loadLocalStackSettings(env: Env = process.env): LocalStackSettings {
  const e = parseEnv(localStackSchema, env);
  return {
    dataDir: e.TARGET_HEALTH_DATA_DIR,
    temporalPort: e.TEMPORAL_PORT,
    temporalUiPort: e.TEMPORAL_UI_PORT,
    postgresPort: e.TARGET_HEALTH_PG_PORT,
  };
}

/** A URL with user info (zod runs every check: a value that is no URL at all is reported by the URL check). */
function hasCredentials(value: string): boolean {
  try {
    const u = new URL(value);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/**
 * Where `npm start`'s dev server serves the web UI on `port`: the one place this address is built. The
 * dev server (so the banner), the CLI's links and the notifications' links all come from here.
 * 127.0.0.1, not localhost: the dev server listens on 127.0.0.1 only, and localhost may resolve to ::1
 * first.
 */
export function localTemporalUiUrl(uiPort: number): string {
  return `http://127.0.0.1:${uiPort}`;
}

/** The UI of `npm start` on its default port (TEMPORAL_UI_PORT unset). */
export const DEFAULT_TEMPORAL_UI_URL = localTemporalUiUrl(8233);

const uiUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http(s) URL like http://127.0.0.1:8233' })
  .refine(
    (v) => !hasCredentials(v),
    'must not carry a user name or password: the links go into notifications and CLI output that people read ' +
      '(put the UI behind your SSO instead)',
  );

/** TEMPORAL_UI_URL when set (validated, without trailing slashes), otherwise undefined. */
export function loadConfiguredTemporalUiUrl(env: Env = process.env): string | undefined {
  if (env.TEMPORAL_UI_URL === undefined || env.TEMPORAL_UI_URL === '') return undefined;
  return parseEnv(z.object({ TEMPORAL_UI_URL: uiUrl }), env).TEMPORAL_UI_URL.replace(/\/+$/, '');
}

/**
 * Base URL of the Temporal web UI, for links in CLI output and notifications: TEMPORAL_UI_URL, else the
 * UI `npm start` serves with these settings (TEMPORAL_UI_PORT, default 8233) — the address its banner prints.
 */
export function loadTemporalUiUrl(env: Env = process.env): string {
  return (
    loadConfiguredTemporalUiUrl(env) ??
    localTemporalUiUrl(
      parseEnv(z.object({ TEMPORAL_UI_PORT: localStackSchema.shape.TEMPORAL_UI_PORT }), env).TEMPORAL_UI_PORT,
    )
  );
}

export function workflowUiLink(uiUrl: string, namespace: string, workflowId: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

const consolePublicUrl = z
  .url({ protocol: /^https?$/, message: 'must be an http(s) URL like https://health.example.com' })
  .refine(
    (v) => !hasCredentials(v),
    'must not carry a user name or password: the links go into notifications that people read',
  );

/**
 * Base URL of the web console for the links in notifications (its Site and Review pages): the origin of
 * TH_CONSOLE_PUBLIC_URL — the address people open behind the TLS proxy, the same setting the API checks
 * POSTs against — else the API this machine serves (TH_API_HOST:TH_API_PORT, a wildcard host as 127.0.0.1).
 * `npm start` passes the address its API listens on, whatever its port.
 */
export function loadConsoleUrl(env: Env = process.env): string {
  if (env.TH_CONSOLE_PUBLIC_URL !== undefined && env.TH_CONSOLE_PUBLIC_URL !== '')
    return consoleBaseUrl(parseEnv(z.object({ TH_CONSOLE_PUBLIC_URL: consolePublicUrl }), env).TH_CONSOLE_PUBLIC_URL);
  if (env.TH_API_PORT === '0')
    throw new UserError(
      'TH_API_PORT is 0 (a free port): the console links in notifications need an address; ' +
        'set TH_CONSOLE_PUBLIC_URL to where people open the console',
    );
  const { TH_API_PORT } = parseEnv(z.object({ TH_API_PORT: port.default(8787) }), env);
  return consoleBaseUrl('', env.TH_API_HOST ?? '', TH_API_PORT);
}

/**
 * The console's base URL: the public URL's origin when there is one, else the API's own address (a wildcard
 * or empty host as 127.0.0.1, an IPv6 address in brackets).
 */
export function consoleBaseUrl(publicUrl: string, apiHost = '', apiPort = 8787): string {
  if (publicUrl !== '') return new URL(publicUrl).origin;
  const host = ['', '0.0.0.0', '::'].includes(apiHost) ? '127.0.0.1' : apiHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${apiPort}`;
}

const webhookUrl = z
  .string()
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL like https://hooks.example.com/target-health')
  // fetch refuses such URLs, and its error quotes the whole URL: refused here, where it is named.
  .refine(
    (v) => !hasCredentials(v),
    'must not carry user:password@ (HTTP clients refuse it); put the token where your webhook provider says, ' +
      'usually in the path or a query parameter',
  );

const notifierEnvSchema = z.object({
  TARGET_HEALTH_WEBHOOK_URL: webhookUrl.optional(),
  TARGET_HEALTH_SLACK_WEBHOOK_URL: webhookUrl.optional(),
});

export interface NotifierSettings {
  /** Generic JSON webhook: every notification is POSTed as JSON. */
  webhookUrl?: string;
  /** Slack-compatible incoming webhook (`{"text": ...}`). */
  slackWebhookUrl?: string;
}

/** Where notifications go besides the structured log; an empty variable counts as unset. */
export function loadNotifierSettings(env: Env = process.env): NotifierSettings {
  const present: Env = {};
  for (const name of ['TARGET_HEALTH_WEBHOOK_URL', 'TARGET_HEALTH_SLACK_WEBHOOK_URL'])
    if (env[name] !== undefined && env[name] !== '') present[name] = env[name];
  const e = parseEnv(notifierEnvSchema, present);
  return {
    ...(e.TARGET_HEALTH_WEBHOOK_URL ? { webhookUrl: e.TARGET_HEALTH_WEBHOOK_URL } : {}),
    ...(e.TARGET_HEALTH_SLACK_WEBHOOK_URL ? { slackWebhookUrl: e.TARGET_HEALTH_SLACK_WEBHOOK_URL } : {}),
  };
}
