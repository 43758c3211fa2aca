-- Every take of a scene, kept for good: what it was made from and the tasks that made it. A new take adds a
-- row; a later take never replaces one. Provider, model, costs and results are the tasks' own.
CREATE TABLE takes (
  project_id      INTEGER NOT NULL REFERENCES projects(id),
  scene           TEXT NOT NULL,
  take            INTEGER NOT NULL CHECK (take >= 1),
  -- The storyboard's take number that varied the seed when this take was made.
  variant         INTEGER NOT NULL CHECK (variant >= 1),
  image_prompt    TEXT NOT NULL,
  motion_prompt   TEXT NOT NULL,
  narration       TEXT,
  duration        REAL NOT NULL CHECK (duration > 0),
  seed            INTEGER NOT NULL,
  image_task_id   INTEGER NOT NULL REFERENCES tasks(id),
  clip_task_id    INTEGER NOT NULL REFERENCES tasks(id),
  speech_task_id  INTEGER REFERENCES tasks(id),
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (project_id, scene, take)
) WITHOUT ROWID;

-- Which take of each scene goes into the render: the person's pick, or the newest take until they pick.
CREATE TABLE take_picks (
  project_id  INTEGER NOT NULL,
  scene       TEXT NOT NULL,
  take        INTEGER NOT NULL,
  picked_at   INTEGER NOT NULL,
  PRIMARY KEY (project_id, scene),
  FOREIGN KEY (project_id, scene, take) REFERENCES takes (project_id, scene, take)
) WITHOUT ROWID;
