-- Up Migration

-- The PostgreSQL contract of crawlers that write to the database directly (`@target-health/crawler/postgres`,
-- docs/crawlers-library.md "PostgreSQL"): they no longer run the store's ingester (norms, rollups, COPY)
-- themselves, and need no rights on the store's tables. Names: packages/crawler/src/postgres/contract.ts.

-- Event batches as the crawler's sink wrote them, waiting for the server's drainer (api/inbox-drainer.ts),
-- which feeds them to the ingester and deletes them. `batch_id` is the sink's idempotency key (a hash of the
-- batch's event ids): a batch resent after a timeout is the same row (INSERT … ON CONFLICT DO NOTHING).
-- `events` is gzip-compressed NDJSON, one event per line, each with its event id: what `POST /v1/events`
-- takes. The server validates every line again (the crawler role can insert anything). Compressed by the
-- crawler (gzip level 1, ~7× on realistic events): stored uncompressed, a batch's TOAST chunks cost
-- PostgreSQL ~6 µs of CPU an event to insert and ~2 to read and delete, and pglz's compression twice
-- that; gzipped, under 1 and 1 (bench:store). Kept out of line as it is (STORAGE EXTERNAL: no second
-- compression).
CREATE TABLE event_inbox (
  batch_id     text PRIMARY KEY CHECK (batch_id ~ '^[A-Za-z0-9:_-]{1,100}$'),
  events       bytea NOT NULL,
  event_count  integer NOT NULL CHECK (event_count BETWEEN 1 AND 1000000),
  received_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE event_inbox ALTER COLUMN events SET STORAGE EXTERNAL;
-- The drainer takes the oldest batch first.
CREATE INDEX event_inbox_received_at ON event_inbox (received_at);

-- Every batch inserted is announced on `th_event_inbox` (no payload), in the inserting transaction: NOTIFY
-- is delivered only if the insert commits, and a resent batch (ON CONFLICT DO NOTHING) inserts no row and
-- fires nothing. A trigger rather than the sink's own NOTIFY: one round trip per batch (an autocommit
-- INSERT), and a crawler role needs no rights beyond INSERT. The drainer also polls, for notifications lost
-- while it was disconnected.
CREATE FUNCTION th_notify_event_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('th_event_inbox', '');
  RETURN NULL;
END $$;

CREATE TRIGGER event_inbox_notify AFTER INSERT ON event_inbox
  FOR EACH ROW EXECUTE FUNCTION th_notify_event_inbox();

-- What a crawler obeys, and nothing else of `site_controls` (no route diagnosis, workflow or assessment):
-- the fields of the API's controls record (docs/api.md "Controls"). Changes are announced on `th_controls`
-- by the table's trigger (migration 006). A view runs with its owner's rights: a crawler role gets SELECT
-- on the view, none on the table.
CREATE VIEW crawler_controls AS
  SELECT site, concurrency_limit, revisit_multiplier, paused, canary_only, effective_cost_multiplier, band, reason, version, updated_at
  FROM site_controls;

-- Down Migration
DROP VIEW crawler_controls;
DROP TABLE event_inbox;
DROP FUNCTION th_notify_event_inbox();
