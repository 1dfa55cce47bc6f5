-- Up Migration

-- Every live reconfiguration of a site's loop (`target-health configure`, the `configure` update): who
-- changed which settings or owners, from what to what, when and why. `change_key` is the idempotency key
-- (site/chain/settings/n): the recording activity retried after a crash finds its row and changes nothing
-- a second time. `settings` is the loop's whole configuration after the change. Kept apart from
-- control_audit, whose rows form a chain of site_controls versions (a settings change writes no controls).
CREATE TABLE settings_changes (
  change_key   text PRIMARY KEY,
  site         text NOT NULL,
  workflow_id  text NOT NULL,
  chain_id     text NOT NULL,
  who          text NOT NULL,
  why          text,
  -- [{"field": "tickIntervalMs", "old": 60000, "new": 10000}, {"field": "owner", "old": …, "new": …}]
  changes      jsonb NOT NULL CHECK (jsonb_typeof(changes) = 'array' AND jsonb_array_length(changes) > 0),
  settings     jsonb NOT NULL,
  changed_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX settings_changes_site_time ON settings_changes (site, changed_at DESC);

-- Down Migration
DROP TABLE settings_changes;
