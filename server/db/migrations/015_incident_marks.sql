-- Up Migration

-- A person's verdict on an incident (`target-health review <site> --incident T --mark right|false-alarm --why …`):
-- the labels `target-health tune` scores candidate settings against (docs/tuning.md). Insert-only: a second mark
-- of the same incident is a new row, and the latest counts, so the table is its own audit trail (who, when, why).
-- `incident_at` is the time given, `incident_from`/`incident_to` the incident's window as the review found it (null
-- for a mark made through the API, `POST /v1/sites/{site}/incident-marks`, which takes the time only). `who` is the
-- login or --who of the CLI's user, or the API token's name.
CREATE TABLE incident_marks (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  site           text NOT NULL,
  incident_at    timestamptz NOT NULL,
  incident_from  timestamptz,
  incident_to    timestamptz,
  verdict        text NOT NULL CHECK (verdict IN ('right', 'false_alarm')),
  who            text NOT NULL,
  why            text NOT NULL,
  marked_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((incident_from IS NULL) = (incident_to IS NULL)),
  CHECK (incident_from IS NULL OR (incident_from <= incident_at AND incident_at <= incident_to))
);
CREATE INDEX incident_marks_site_time ON incident_marks (site, incident_at);

-- Down Migration
DROP TABLE incident_marks;
