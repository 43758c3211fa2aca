-- A project moved here from a studio's own database (studio team push). push_id names that move, so a push cut
-- short after it committed here, and run again, finds the project instead of copying it a second time.
ALTER TABLE projects ADD COLUMN push_id TEXT UNIQUE;
-- The machine it was moved from, and when, for people.
ALTER TABLE projects ADD COLUMN pushed_from TEXT;
ALTER TABLE projects ADD COLUMN pushed_at BIGINT;
ALTER TABLE projects ADD CONSTRAINT projects_pushed CHECK ((push_id IS NULL) = (pushed_from IS NULL) AND (push_id IS NULL) = (pushed_at IS NULL));
