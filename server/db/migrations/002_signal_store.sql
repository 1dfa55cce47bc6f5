-- Up Migration

-- The signal store. Three layers, each built for one reader:
--   request_events   raw outcomes, partitioned by day, kept for a short retention (re-computation, audits);
--   rollup_minute/hour/day   per (site, bucket, route) counts, and on the all-routes row ('*') a
--                    mergeable latency histogram; a tick reads ~100 rows instead of millions of events;
--   page_norms_day   per (site, page type) size and records norms, for soft-block detection by content.
-- Retention drops whole partitions (db/signal-store/partitions.ts), never bulk DELETEs.

-- Key columns use the "C" collation: byte-wise comparison. Locale-aware comparison made the unique
-- index the largest single cost of ingestion, and these keys (hosts, ids, labels) have no locale.
CREATE TABLE request_events (
  ts             timestamptz NOT NULL,
  site           text COLLATE "C" NOT NULL,
  event_id       text COLLATE "C",
  country        text,
  pool           text,
  session        text,
  page_type      text,
  status         smallint,
  network_error  text,
  latency_ms     double precision NOT NULL,
  bytes          bigint,
  retries        integer,
  credits        double precision,
  extraction     text,
  missing_fields text[],
  valid_records  integer,
  canary         boolean NOT NULL DEFAULT false,
  outcome        text NOT NULL,
  rule           text NOT NULL,
  marker_id      text
) PARTITION BY RANGE (ts);
-- Idempotency: a repeated event id (a retried batch) is ignored. Events without an id are never
-- deduplicated (NULLs are distinct). The partition key must be part of a unique index on a
-- partitioned table; a retried event carries the same ts, so this is enough.
CREATE UNIQUE INDEX request_events_event_id ON request_events (site, event_id, ts);
-- No (site, ts) index: ticks read rollups, never raw rows, and each index costs ingest throughput.
-- Raw rows are read only for audits and re-computation, per day partition.

-- Rollups: identical columns at three resolutions. route_key is 'country|pool|session' (empty parts
-- for unknown labels), or '*' for the all-routes row that also carries the latency histogram.
CREATE TABLE rollup_minute (
  site               text COLLATE "C" NOT NULL,
  bucket             timestamptz NOT NULL,
  route_key          text COLLATE "C" NOT NULL,
  country            text,
  pool               text,
  session            text,
  requests           bigint NOT NULL DEFAULT 0,
  ok                 bigint NOT NULL DEFAULT 0,
  hard_blocks        bigint NOT NULL DEFAULT 0,
  challenges         bigint NOT NULL DEFAULT 0,
  soft_blocks        bigint NOT NULL DEFAULT 0,
  errors             bigint NOT NULL DEFAULT 0,
  extraction_ok      bigint NOT NULL DEFAULT 0,
  extraction_missing bigint NOT NULL DEFAULT 0,
  extraction_schema  bigint NOT NULL DEFAULT 0,
  extraction_empty   bigint NOT NULL DEFAULT 0,
  valid_records      bigint NOT NULL DEFAULT 0,
  retries            bigint NOT NULL DEFAULT 0,
  bytes              bigint NOT NULL DEFAULT 0,
  credits            double precision NOT NULL DEFAULT 0,
  canary_runs        bigint NOT NULL DEFAULT 0,
  canary_failures    bigint NOT NULL DEFAULT 0,
  latency_hist       integer[],
  PRIMARY KEY (site, bucket, route_key)
) PARTITION BY RANGE (bucket);

CREATE TABLE rollup_hour (LIKE rollup_minute INCLUDING DEFAULTS, PRIMARY KEY (site, bucket, route_key)) PARTITION BY RANGE (bucket);
CREATE TABLE rollup_day (LIKE rollup_minute INCLUDING DEFAULTS, PRIMARY KEY (site, bucket, route_key)) PARTITION BY RANGE (bucket);

-- Size and records norms per (site, page type, day): what a normal response of that page type looks
-- like on that site. bytes_hist uses the same log-bucket scheme as latency (signals/histogram.ts).
CREATE TABLE page_norms_day (
  site           text COLLATE "C" NOT NULL,
  page_type      text COLLATE "C" NOT NULL,
  day            date NOT NULL,
  responses      bigint NOT NULL DEFAULT 0,
  with_records   bigint NOT NULL DEFAULT 0,
  extractions    bigint NOT NULL DEFAULT 0,
  bytes_hist     integer[],
  PRIMARY KEY (site, page_type, day)
) PARTITION BY RANGE (day);

-- Element-wise sum of two histograms (either may be NULL or shorter: missing buckets count 0).
CREATE FUNCTION th_hist_add(a integer[], b integer[]) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN a IS NULL THEN b
    WHEN b IS NULL THEN a
    ELSE (SELECT array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY i) FROM unnest(a, b) WITH ORDINALITY AS t(x, y, i))
  END
$$;

CREATE AGGREGATE th_hist_sum(integer[]) (SFUNC = th_hist_add, STYPE = integer[]);

-- Down Migration
DROP AGGREGATE th_hist_sum(integer[]);
DROP FUNCTION th_hist_add(integer[], integer[]);
DROP TABLE page_norms_day;
DROP TABLE rollup_day;
DROP TABLE rollup_hour;
DROP TABLE rollup_minute;
DROP TABLE request_events;
