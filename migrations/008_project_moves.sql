-- A project moved to a team database (studio team push). From the start of the move the project here buys and runs
-- nothing more, so no step can be paid for on both sides. moved_at stays NULL until the team database has the
-- project; a move cut short is finished by running it again, which finds the project there by its push_id.
CREATE TABLE project_moves (
  project_id       INTEGER PRIMARY KEY REFERENCES projects(id),
  push_id          TEXT NOT NULL UNIQUE,
  -- The team database's address, without its password.
  team             TEXT NOT NULL,
  started_at       INTEGER NOT NULL,
  moved_at         INTEGER,
  team_project_id  INTEGER,
  CHECK ((moved_at IS NULL) = (team_project_id IS NULL))
);
