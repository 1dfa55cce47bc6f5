-- Up Migration

-- Every tick's scoring step, stored with its assessment since this release (`result.scoring`, written by
-- the assessment activity with core/control/scoring-step.ts, the planner's own function): the rounded
-- smoothed score the band is judged on, and the band the score puts the site in. As generated columns,
-- like 003's `score`, so history and charts read them with plain SQL. Rows stored before have neither
-- (NULL): readers say so. One ALTER for both, so the table is rewritten once.
ALTER TABLE assessments
  ADD COLUMN smoothed_score smallint GENERATED ALWAYS AS ((result #>> '{scoring,smoothedScore}')::smallint) STORED,
  ADD COLUMN scored_band text GENERATED ALWAYS AS (result #>> '{scoring,scoredBand}') STORED;

-- Down Migration
ALTER TABLE assessments DROP COLUMN scored_band, DROP COLUMN smoothed_score;
