-- The task table: one row is the unit of recovery for one paid or local step.
-- Times are milliseconds since the Unix epoch. Money is in micro-units of `currency`
-- (1 USD = 1,000,000) so sums never drift.

CREATE TABLE projects (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
  budget      INTEGER CHECK (budget IS NULL OR budget >= 0),
  currency    TEXT NOT NULL DEFAULT 'USD',
  created_at  INTEGER NOT NULL
);

CREATE TABLE tasks (
  id                 INTEGER PRIMARY KEY,
  project_id         INTEGER NOT NULL REFERENCES projects(id),
  kind               TEXT NOT NULL CHECK (kind IN ('image', 'clip', 'speech', 'render')),
  provider           TEXT NOT NULL,
  model              TEXT NOT NULL,
  input_json         TEXT NOT NULL CHECK (json_valid(input_json)),
  input_hash         TEXT NOT NULL,
  status             TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN
                       ('PENDING', 'RUNNING', 'SUBMITTED', 'SUCCEEDED', 'FAILED', 'OUTCOME_UNKNOWN', 'CANCELLED')),
  -- 'no': nothing was sent or the provider refused it; 'maybe': sent, outcome not known; 'yes': accepted.
  charged            TEXT NOT NULL DEFAULT 'no' CHECK (charged IN ('no', 'maybe', 'yes')),
  attempts           INTEGER NOT NULL DEFAULT 0,
  max_attempts       INTEGER NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
  next_attempt_at    INTEGER NOT NULL,
  lease_owner        TEXT,
  lease_expires_at   INTEGER,
  heartbeat_at       INTEGER,
  submit_started_at  INTEGER,
  idempotency_key    TEXT,
  remote_request_id  TEXT,
  -- What else the provider said is needed to reach the request again (fal's status and response URLs).
  remote_handle      TEXT CHECK (remote_handle IS NULL OR json_valid(remote_handle)),
  submitted_at       INTEGER,
  progress           REAL CHECK (progress IS NULL OR (progress >= 0 AND progress <= 1)),
  cost_estimated     INTEGER,
  cost_estimate_source TEXT,
  cost_actual        INTEGER,
  -- Estimates of earlier attempts a person resubmitted after an unknown outcome: possibly charged too.
  cost_abandoned     INTEGER NOT NULL DEFAULT 0,
  currency           TEXT NOT NULL DEFAULT 'USD',
  output_path        TEXT,
  output_sha256      TEXT,
  error              TEXT,
  unknown_reason     TEXT,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  finished_at        INTEGER,
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
  CHECK (status <> 'SUBMITTED' OR remote_request_id IS NOT NULL)
);

CREATE TABLE task_dependencies (
  task_id     INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  depends_on  INTEGER NOT NULL REFERENCES tasks(id),
  PRIMARY KEY (task_id, depends_on),
  CHECK (task_id <> depends_on)
) WITHOUT ROWID;

-- The claim reads fresh work in creation order and expired leases by expiry; finished rows stay out
-- of both indexes, so 100,000 finished tasks cost the claim nothing.
CREATE INDEX tasks_claim_pending ON tasks (kind, created_at, id) WHERE status = 'PENDING';
CREATE INDEX tasks_leased ON tasks (kind, lease_expires_at) WHERE status IN ('RUNNING', 'SUBMITTED');
CREATE INDEX tasks_lease_owner ON tasks (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX tasks_project ON tasks (project_id, status);
CREATE INDEX tasks_unknown ON tasks (updated_at) WHERE status = 'OUTCOME_UNKNOWN';
CREATE INDEX tasks_remote_request ON tasks (provider, remote_request_id) WHERE remote_request_id IS NOT NULL;
CREATE INDEX task_dependencies_reverse ON task_dependencies (depends_on);

-- Every transition, with its reason and who made it. Append-only: the triggers refuse edits.
CREATE TABLE task_events (
  id           INTEGER PRIMARY KEY,
  task_id      INTEGER NOT NULL REFERENCES tasks(id),
  at           INTEGER NOT NULL,
  from_status  TEXT,
  to_status    TEXT NOT NULL,
  actor        TEXT NOT NULL CHECK (actor IN ('engine', 'person')),
  reason       TEXT NOT NULL,
  detail_json  TEXT CHECK (detail_json IS NULL OR json_valid(detail_json))
);
CREATE INDEX task_events_task ON task_events (task_id, id);

CREATE TRIGGER task_events_no_update BEFORE UPDATE ON task_events
BEGIN SELECT RAISE(ABORT, 'task_events is append-only'); END;
CREATE TRIGGER task_events_no_delete BEFORE DELETE ON task_events
BEGIN SELECT RAISE(ABORT, 'task_events is append-only'); END;

-- Processes that hold leases. A row whose owner process is gone on this machine is recovered at
-- start-up instead of after its lease runs out.
CREATE TABLE lease_owners (
  id          TEXT PRIMARY KEY,
  hostname    TEXT NOT NULL,
  pid         INTEGER NOT NULL,
  started_at  INTEGER NOT NULL,
  seen_at     INTEGER NOT NULL
) WITHOUT ROWID;
