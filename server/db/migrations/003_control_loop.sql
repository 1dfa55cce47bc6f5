-- Up Migration

-- What the crawler obeys for each site: one row, written only by the control loop's action activities
-- (and by a person's decision, through the loop). `version` grows by one on every change so a crawler
-- can poll cheaply ("anything newer than 41?"). The loop's own state lives in Temporal; this is its
-- published output.
CREATE TABLE site_controls (
  site                       text PRIMARY KEY,
  concurrency_limit          integer NOT NULL CHECK (concurrency_limit >= 1),
  revisit_multiplier         double precision NOT NULL CHECK (revisit_multiplier >= 1),
  paused                     boolean NOT NULL,
  canary_only                boolean NOT NULL,
  effective_cost_multiplier  double precision NOT NULL CHECK (effective_cost_multiplier >= 1),
  band                       text NOT NULL CHECK (band IN ('learning', 'healthy', 'degrading', 'resisting', 'stopped')),
  reason                     text NOT NULL,
  -- The last route diagnosis recorded by a degrading tick (site-wide or route-specific, with suspects).
  route_diagnosis            jsonb,
  workflow_id                text NOT NULL,
  -- The assessment (assessments.assessment_key) that caused the latest change, when one did.
  assessment_key             text,
  version                    bigint NOT NULL DEFAULT 1,
  updated_by                 text NOT NULL,
  updated_at                 timestamptz NOT NULL DEFAULT now()
);

-- One row per change of a site_controls record: old -> new, why, what caused it, who or what did it.
-- `action_key` is the idempotency key of the action (site/chain/tick/action or site/chain/decision/n):
-- an activity retried after a crash finds its row and changes nothing a second time.
CREATE TABLE control_audit (
  id              bigserial PRIMARY KEY,
  action_key      text NOT NULL UNIQUE,
  site            text NOT NULL,
  workflow_id     text NOT NULL,
  old_controls    jsonb,
  new_controls    jsonb NOT NULL,
  changed_fields  text[] NOT NULL,
  assessment_key  text,
  decision_key    text,
  actor           text NOT NULL,
  reason          text NOT NULL,
  changed_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX control_audit_site_time ON control_audit (site, changed_at DESC, id DESC);

-- Every human decision (resume, stop, pause), with the assessment that led to it.
CREATE TABLE decisions (
  decision_key    text PRIMARY KEY,
  site            text NOT NULL,
  workflow_id     text NOT NULL,
  chain_id        text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('resume', 'stop', 'pause')),
  who             text NOT NULL,
  why             text NOT NULL,
  -- resume only: {"mode": "cautious"} or {"mode": "explicit", "concurrency": n, "revisitMultiplier": x}
  mode            jsonb,
  via             text NOT NULL CHECK (via IN ('signal', 'update')),
  assessment_key  text,
  awaiting_since  timestamptz,
  decided_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX decisions_site_time ON decisions (site, decided_at DESC);

-- The notifications outbox: written in the same transaction as the action that raised it, delivered
-- afterwards by a retrying activity, so a webhook that is down never blocks (or undoes) an action.
CREATE TABLE notifications (
  notification_key  text PRIMARY KEY,
  site              text NOT NULL,
  kind              text NOT NULL,
  severity          text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  recipient         text,
  payload           jsonb NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  attempts          integer NOT NULL DEFAULT 0,
  last_error        text,
  delivered_at      timestamptz,
  failed_at         timestamptz
);
CREATE INDEX notifications_site_time ON notifications (site, created_at DESC);
CREATE INDEX notifications_undelivered ON notifications (created_at) WHERE delivered_at IS NULL AND failed_at IS NULL;

-- One row per channel that is done with a notification (log, webhook, slack): `delivered`, or
-- `rejected` for good (a 4xx: retrying would not help). A retry after the generic webhook succeeded and
-- Slack failed goes to Slack only.
CREATE TABLE notification_deliveries (
  notification_key  text NOT NULL REFERENCES notifications (notification_key) ON DELETE CASCADE,
  channel           text NOT NULL,
  outcome           text NOT NULL CHECK (outcome IN ('delivered', 'rejected')),
  detail            text,
  delivered_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (notification_key, channel)
);

-- The assessments history gains the workflow chain and, as generated columns, the two scores, so
-- months of history can be charted with plain SQL (the full assessment stays in `result`).
ALTER TABLE assessments ADD COLUMN chain_id text;
ALTER TABLE assessments ADD COLUMN score smallint GENERATED ALWAYS AS ((result #>> '{assessment,health,score}')::smallint) STORED;
ALTER TABLE assessments ADD COLUMN parser_health smallint GENERATED ALWAYS AS ((result #>> '{assessment,parser,score}')::smallint) STORED;
CREATE INDEX assessments_site_tick ON assessments (site, tick);

-- Down Migration
DROP INDEX assessments_site_tick;
ALTER TABLE assessments DROP COLUMN parser_health;
ALTER TABLE assessments DROP COLUMN score;
ALTER TABLE assessments DROP COLUMN chain_id;
DROP TABLE notification_deliveries;
DROP TABLE notifications;
DROP TABLE decisions;
DROP TABLE control_audit;
DROP TABLE site_controls;
