-- A project's storyboard: its ordered scenes and the provider and model of each step, as JSON the studio
-- validates on every save. Tasks are generated from it; it is never generated from them.
CREATE TABLE storyboards (
  project_id  INTEGER PRIMARY KEY REFERENCES projects(id),
  json        TEXT NOT NULL CHECK (json_valid(json)),
  updated_at  INTEGER NOT NULL
);

-- Generate looks up an identical step already in the project (same provider, model and input) to reuse it.
CREATE INDEX tasks_reuse ON tasks (project_id, input_hash);

-- The desktop app asks how many renders have finished on every change, to say when a video is ready.
CREATE INDEX tasks_kind_status ON tasks (kind, status);

-- The task board pages through a project's tasks newest first.
CREATE INDEX tasks_project_newest ON tasks (project_id, id);
