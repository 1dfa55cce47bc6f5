-- Up Migration

-- One row per watched site (normalised host). Owners are who the control loop notifies:
-- `owner` for hostility (the crawl's owner), `parser_owner` for extraction failures.
CREATE TABLE sites (
  site          text PRIMARY KEY,
  owner         text,
  parser_owner  text,
  config        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per tick of a site's control loop. `assessment_key` is the idempotency key
-- (site, first run id of the workflow chain, tick number), so an activity retried after a worker
-- crash finds the row it already wrote instead of writing a second one.
CREATE TABLE assessments (
  assessment_key  text PRIMARY KEY,
  site            text NOT NULL,
  workflow_id     text NOT NULL,
  tick            bigint NOT NULL CHECK (tick >= 1),
  assessed_at     timestamptz NOT NULL DEFAULT now(),
  result          jsonb NOT NULL
);
CREATE INDEX assessments_site_time ON assessments (site, assessed_at DESC);

-- Down Migration
DROP TABLE assessments;
DROP TABLE sites;
