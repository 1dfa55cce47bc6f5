-- Up Migration

-- What a site actually served, for the console's Site page (docs/console.md, "Site"): refusals by vendor and
-- marker, with a few recent examples (time, route, status, title).
--   title: the page title of a refused event (hard block, challenge, soft block) as the crawler sent it, so a
--          person reads "Just a moment..." rather than a rule name; left NULL on every other event, where it
--          would only cost space (most events are ordinary pages).
--   request_events_refusals: the refused rows of a site by time. Raw rows had no (site, ts) index (ticks read
--          rollups); reading one site's refusals of the last hours then scanned every site's rows of those
--          hours. Partial, so only refused rows pay for it at ingest; raw retention (7 days) bounds its size.
ALTER TABLE request_events ADD COLUMN title text;
CREATE INDEX request_events_refusals ON request_events (site, ts)
  WHERE outcome IN ('hard_block', 'challenge', 'soft_block');

-- Down Migration
DROP INDEX request_events_refusals;
ALTER TABLE request_events DROP COLUMN title;
