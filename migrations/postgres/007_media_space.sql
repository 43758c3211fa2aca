-- This team database's own folder in the media folder. Two team databases may share one media folder (a studio
-- with a database per client on one file share): their task ids are numbered apart, so one folder for both would
-- give two paid files one name and the second would replace the first. A database that already has tasks keeps
-- the folder "team" its machines have been saving into (a result record of a task still under way is found there);
-- a new one draws a folder of its own.
CREATE TABLE media_space (
  one   INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
  name  TEXT NOT NULL CHECK (name ~ '^team(-[0-9a-f]{12})?$')
);
INSERT INTO media_space (one, name)
  SELECT 1, CASE WHEN EXISTS (SELECT 1 FROM tasks) THEN 'team' ELSE 'team-' || substr(md5(random()::text || clock_timestamp()::text), 1, 12) END;
