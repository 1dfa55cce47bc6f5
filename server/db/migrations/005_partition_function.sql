-- Up Migration

-- Creating a partition takes the rights of the tables' owner (CREATE on the schema, ownership of the
-- partitioned table). Ingestion creates the partitions a batch needs (db/signal-store/partitions.ts), so
-- without this function every crawler writing events would need those rights. th_ensure_partition runs
-- with its owner's rights (SECURITY DEFINER) and can do exactly one thing: create the partition of one
-- of the signal store's partitioned tables that covers one instant — its name and bounds computed here
-- from the table's fixed span, never taken from the caller. A least-privilege crawler role
-- (docs/security.md, "A least-privilege role for crawlers") gets EXECUTE on it and no DDL rights.
CREATE FUNCTION th_ensure_partition(parent text, instant timestamptz) RETURNS text
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
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part_name, parent,
                 to_char(lower_bound, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), to_char(upper_bound, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
  RETURN part_name;
END
$$;

-- A SECURITY DEFINER function resolves names through its search_path: pin it to the schema the store
-- lives in, temporary objects last, so a caller cannot put a table of its own in the way.
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION th_ensure_partition(text, timestamptz) SET search_path = %I, pg_temp', current_schema());
END
$$;

-- Only the owner, and the roles it grants EXECUTE to.
REVOKE ALL ON FUNCTION th_ensure_partition(text, timestamptz) FROM PUBLIC;

-- Down Migration
DROP FUNCTION th_ensure_partition(text, timestamptz);
