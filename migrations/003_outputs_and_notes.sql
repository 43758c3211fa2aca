-- Every file of a paid result: a request for several images pays for all of them, so all are kept.
CREATE TABLE task_outputs (
  task_id       INTEGER NOT NULL REFERENCES tasks(id),
  idx           INTEGER NOT NULL CHECK (idx >= 0),
  path          TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  bytes         INTEGER,
  content_type  TEXT,
  PRIMARY KEY (task_id, idx)
) WITHOUT ROWID;

INSERT INTO task_outputs (task_id, idx, path, sha256)
  SELECT id, 0, output_path, output_sha256 FROM tasks
   WHERE status = 'SUCCEEDED' AND output_path IS NOT NULL AND output_sha256 IS NOT NULL;

-- What the engine is waiting on, in words for the person: a request still running at the provider long
-- after the poll deadline, a paid result that cannot be saved yet and why. Cleared when the task ends.
ALTER TABLE tasks ADD COLUMN note TEXT;
