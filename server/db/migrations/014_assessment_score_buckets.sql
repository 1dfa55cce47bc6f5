-- Up Migration

-- The score trend behind the sparklines (`target-health sites`, `status`, the console's Fleet page) kept as it is
-- written: per site and 24-minute bucket on a grid aligned to the UTC day (60 a day; three make one of the
-- sparkline's 72-minute points: server/fleet/trend.ts), the sum and count of its ticks' raw scores and its number
-- of ticks. A day's sparkline then reads 60 narrow rows a site instead of a day of wide assessment rows (1,440
-- at 60 s ticks), so the fleet's sparklines cost the same whatever the tick rate. Kept by statement-level
-- triggers on `assessments`, in the writer's transaction: a tick written late (a retried activity keeps its
-- scheduled time) lands in its own bucket however old, and a bulk insert updates each bucket once.
CREATE TABLE assessment_score_buckets (
  site       text NOT NULL,
  bucket     timestamptz NOT NULL,
  score_sum  bigint NOT NULL,
  scored     integer NOT NULL,
  ticks      integer NOT NULL,
  PRIMARY KEY (site, bucket)
);

-- Assessments are written once and never changed; updates, deletes and TRUNCATE are followed all the same (the
-- old rows taken off), so the buckets always equal an aggregate of the table.
CREATE FUNCTION assessment_score_buckets_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE assessment_score_buckets;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE assessment_score_buckets b
       SET score_sum = b.score_sum - o.score_sum, scored = b.scored - o.scored, ticks = b.ticks - o.ticks
      FROM (SELECT site, date_bin(interval '24 minutes', assessed_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS bucket,
                   COALESCE(sum(score), 0) AS score_sum, count(score) AS scored, count(*) AS ticks
              FROM old_rows GROUP BY 1, 2) o
     WHERE b.site = o.site AND b.bucket = o.bucket;
    DELETE FROM assessment_score_buckets WHERE ticks <= 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO assessment_score_buckets AS b (site, bucket, score_sum, scored, ticks)
    SELECT site, date_bin(interval '24 minutes', assessed_at, TIMESTAMPTZ '1970-01-01 00:00:00+00'),
           COALESCE(sum(score), 0), count(score), count(*)
      FROM new_rows GROUP BY 1, 2
    ON CONFLICT (site, bucket) DO UPDATE
       SET score_sum = b.score_sum + EXCLUDED.score_sum, scored = b.scored + EXCLUDED.scored,
           ticks = b.ticks + EXCLUDED.ticks;
  END IF;
  RETURN NULL;
END $$;

-- One trigger per event: PostgreSQL allows transition tables only on single-event triggers.
CREATE TRIGGER assessments_score_buckets_insert AFTER INSERT ON assessments
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION assessment_score_buckets_apply();
CREATE TRIGGER assessments_score_buckets_update AFTER UPDATE ON assessments
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION assessment_score_buckets_apply();
CREATE TRIGGER assessments_score_buckets_delete AFTER DELETE ON assessments
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION assessment_score_buckets_apply();
CREATE TRIGGER assessments_score_buckets_truncate AFTER TRUNCATE ON assessments
  FOR EACH STATEMENT EXECUTE FUNCTION assessment_score_buckets_apply();

-- The history so far (the triggers' lock on `assessments` holds writers until this commits).
INSERT INTO assessment_score_buckets (site, bucket, score_sum, scored, ticks)
SELECT site, date_bin(interval '24 minutes', assessed_at, TIMESTAMPTZ '1970-01-01 00:00:00+00'),
       COALESCE(sum(score), 0), count(score), count(*)
  FROM assessments GROUP BY 1, 2;

-- Down Migration
DROP TRIGGER assessments_score_buckets_truncate ON assessments;
DROP TRIGGER assessments_score_buckets_delete ON assessments;
DROP TRIGGER assessments_score_buckets_update ON assessments;
DROP TRIGGER assessments_score_buckets_insert ON assessments;
DROP FUNCTION assessment_score_buckets_apply();
DROP TABLE assessment_score_buckets;
