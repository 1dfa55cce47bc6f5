-- Up Migration

-- th_ensure_partition (migration 005) made a partition with CREATE TABLE ... PARTITION OF, which takes
-- an ACCESS EXCLUSIVE lock on the partitioned table: it waited for every ingest transaction in flight
-- and held every new one back behind it, so each new day of a back-fill (and the first batch after
-- midnight UTC) stalled all writers for a batch's time. Now the partition is made as a table of its
-- own and then attached: ATTACH PARTITION takes only SHARE UPDATE EXCLUSIVE on the parent, which
-- concurrent COPY and INSERT (ROW EXCLUSIVE) do not conflict with. The table is new and empty, so
-- attaching it checks nothing and builds its indexes at once. Same name, bounds, rights and contract.
CREATE OR REPLACE FUNCTION th_ensure_partition(parent text, instant timestamptz) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  -- The span of one partition of each table: the same as PARTITIONED_TABLES in partitions.ts.
  unit text := CASE parent
    WHEN 'request_events' THEN 'day'
    WHEN 'rollup_minute' THEN 'day'
    WHEN 'rollup_hour' THEN 'month'
    WHEN 'rollup_day' THEN 'year'
    WHEN 'page_norms_day' THEN 'month'
  END;
  lower_bound timestamp;
  upper_bound timestamp;
  part_name text;
BEGIN
  IF unit IS NULL THEN
    RAISE EXCEPTION 'th_ensure_partition: "%" is not a partitioned table of the signal store', parent USING ERRCODE = '22023';
  END IF;
  IF instant IS NULL OR NOT isfinite(instant) THEN
    RAISE EXCEPTION 'th_ensure_partition: the instant must be a finite time' USING ERRCODE = '22023';
  END IF;
  -- UTC, whatever the session's TimeZone: bounds and names as partitions.ts computes them.
  lower_bound := date_trunc(unit, instant AT TIME ZONE 'UTC');
  upper_bound := lower_bound + ('1 ' || unit)::interval;
  part_name := parent || '_p' || to_char(lower_bound, 'YYYYMMDD');
  -- Callers serialise on an advisory lock (partitions.ts); a table of that name is one of ours, attached
  -- in the same transaction that made it.
  IF to_regclass(format('%I.%I', current_schema(), part_name)) IS NOT NULL THEN
    RETURN part_name;
  END IF;
  -- LIKE copies the columns with their types, collations, NOT NULL and defaults; ATTACH adds the
  -- parent's indexes (the event-id unique index, the rollups' primary keys).
  -- A raw-event partition is written once (a day's events, insert-only) and dropped by retention a few
  -- days later; ticks never read it (they read rollups), audits read it by site and day. Autovacuum's
  -- insert-triggered vacuum (visibility bits for index-only scans nobody runs) and its ANALYZE, rerun
  -- each time the growing partition gains a tenth, cost PostgreSQL about a third as much CPU again as
  -- ingesting the rows, after the fact. Off for these partitions only; the anti-wraparound vacuum still
  -- runs when due (each batch is one transaction id: a partition is long dropped before that).
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', part_name, parent)
    || CASE WHEN parent = 'request_events' THEN ' WITH (autovacuum_enabled = false)' ELSE '' END;
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part_name,
                 to_char(lower_bound, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), to_char(upper_bound, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
  RETURN part_name;
END
$$;

-- CREATE OR REPLACE resets the function's settings: pin its search_path again (see migration 005).
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION th_ensure_partition(text, timestamptz) SET search_path = %I, pg_temp', current_schema());
END
$$;

-- Down Migration
-- The function of migration 005 (CREATE TABLE ... PARTITION OF): same contract, the blocking lock.
CREATE OR REPLACE FUNCTION th_ensure_partition(parent text, instant timestamptz) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  unit text := CASE parent
    WHEN 'request_events' THEN 'day'
    WHEN 'rollup_minute' THEN 'day'
    WHEN 'rollup_hour' THEN 'month'
    WHEN 'rollup_day' THEN 'year'
    WHEN 'page_norms_day' THEN 'month'
  END;
  lower_bound timestamp;
  upper_bound timestamp;
  part_name text;
BEGIN
  IF unit IS NULL THEN
    RAISE EXCEPTION 'th_ensure_partition: "%" is not a partitioned table of the signal store', parent USING ERRCODE = '22023';
  END IF;
  IF instant IS NULL OR NOT isfinite(instant) THEN
    RAISE EXCEPTION 'th_ensure_partition: the instant must be a finite time' USING ERRCODE = '22023';
  END IF;
  lower_bound := date_trunc(unit, instant AT TIME ZONE 'UTC');
  upper_bound := lower_bound + ('1 ' || unit)::interval;
  part_name := parent || '_p' || to_char(lower_bound, 'YYYYMMDD');
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part_name, parent,
                 to_char(lower_bound, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), to_char(upper_bound, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
  RETURN part_name;
END
$$;

-- CREATE OR REPLACE resets the function's settings: pin its search_path again (see migration 005).
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION th_ensure_partition(text, timestamptz) SET search_path = %I, pg_temp', current_schema());
END
$$;
