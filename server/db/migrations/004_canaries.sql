-- Up Migration

-- Canary definitions: pages with a known correct answer, fetched through the production route.
-- `id` is "<site>/<name>" (readable in logs, stable across edits). `definition` is the validated JSON
-- form (canaries/definition.ts); `revision` goes up whenever it changes, so results of an older
-- definition (e.g. the old expected price) never count as the canary's latest answer.
CREATE TABLE canaries (
  id           text PRIMARY KEY,
  site         text NOT NULL REFERENCES sites (site) ON DELETE CASCADE,
  name         text NOT NULL,
  revision     integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
  interval_ms  bigint NOT NULL CHECK (interval_ms > 0),
  definition   jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (site, name)
);

-- One row per canary run. `run_key` ("<canary id>/<scheduled slot, ISO-8601>") is the idempotency key:
-- a retried or repeated call in the same slot finds the row instead of writing a second one.
-- No foreign key to `canaries`: the history outlives a removed canary, because the baseline-trust rule
-- (which days canaries failed) reads past runs.
CREATE TABLE canary_runs (
  run_key          text PRIMARY KEY,
  canary_id        text NOT NULL,
  site             text NOT NULL,
  revision         integer NOT NULL,
  trigger          text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  scheduled_at     timestamptz NOT NULL,
  ran_at           timestamptz NOT NULL,
  result           text NOT NULL CHECK (result IN ('pass', 'mismatch', 'blocked', 'error')),
  -- False when the run failed on our own configuration before reaching the site.
  counts_for_site  boolean NOT NULL,
  outcome          text CHECK (outcome IN ('ok', 'hard_block', 'challenge', 'soft_block', 'error')),
  rule             text,
  reason           text NOT NULL,
  evidence         text NOT NULL CHECK (char_length(evidence) <= 500),
  route            text NOT NULL,
  status           integer,
  latency_ms       integer,
  bytes            bigint,
  checks           jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- The request-outcome event of the fetch (canary: true), null when nothing was fetched.
  event            jsonb
);
CREATE INDEX canary_runs_latest ON canary_runs (canary_id, ran_at DESC);
CREATE INDEX canary_runs_site_time ON canary_runs (site, ran_at);

-- Down Migration
DROP TABLE canary_runs;
DROP TABLE canaries;
