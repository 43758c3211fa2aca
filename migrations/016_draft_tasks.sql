-- migrate: foreign keys off
-- A task may now be a storyboard draft ('draft'): a text model turns an idea into scenes, paid like any other step.
-- SQLite cannot change a CHECK constraint in place, so the table is made again by the procedure SQLite documents
-- for any change of a table's definition (sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema
-- Changes": create the new table, copy, drop the old, rename the new, recreate its indexes). The migrator runs it
-- with foreign keys off and checks every reference (PRAGMA foreign_key_check) before it commits, as the procedure
-- says; the line above asks it to. The columns, their order and every other constraint are as they were, the only
-- change is 'draft' among the kinds; no trigger or view names this table.

CREATE TABLE new_tasks (
  id                 INTEGER PRIMARY KEY,
  project_id         INTEGER NOT NULL REFERENCES projects(id),
  kind               TEXT NOT NULL CHECK (kind IN ('image', 'clip', 'speech', 'render', 'draft')),
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
  note               TEXT,
  cost_actual_source TEXT,
  lookup_due_at      INTEGER,
  remote_alias       TEXT,
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
  CHECK (status <> 'SUBMITTED' OR remote_request_id IS NOT NULL)
);

INSERT INTO new_tasks (id, project_id, kind, provider, model, input_json, input_hash, status, charged, attempts, max_attempts,
  next_attempt_at, lease_owner, lease_expires_at, heartbeat_at, submit_started_at, idempotency_key, remote_request_id,
  remote_handle, submitted_at, progress, cost_estimated, cost_estimate_source, cost_actual, cost_abandoned, currency,
  output_path, output_sha256, error, unknown_reason, created_at, updated_at, finished_at, note, cost_actual_source,
  lookup_due_at, remote_alias)
SELECT id, project_id, kind, provider, model, input_json, input_hash, status, charged, attempts, max_attempts,
  next_attempt_at, lease_owner, lease_expires_at, heartbeat_at, submit_started_at, idempotency_key, remote_request_id,
  remote_handle, submitted_at, progress, cost_estimated, cost_estimate_source, cost_actual, cost_abandoned, currency,
  output_path, output_sha256, error, unknown_reason, created_at, updated_at, finished_at, note, cost_actual_source,
  lookup_due_at, remote_alias
FROM tasks;

DROP TABLE tasks;
ALTER TABLE new_tasks RENAME TO tasks;

-- Every index the table had (migrations 001, 002, 006 and 012), as it was.
CREATE INDEX tasks_claim_pending ON tasks (kind, created_at, id) WHERE status = 'PENDING';
CREATE INDEX tasks_leased ON tasks (kind, lease_expires_at) WHERE status IN ('RUNNING', 'SUBMITTED');
CREATE INDEX tasks_lease_owner ON tasks (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX tasks_project ON tasks (project_id, status);
CREATE INDEX tasks_unknown ON tasks (updated_at) WHERE status = 'OUTCOME_UNKNOWN';
CREATE INDEX tasks_remote_request ON tasks (provider, remote_request_id) WHERE remote_request_id IS NOT NULL;
CREATE INDEX tasks_reuse ON tasks (project_id, input_hash);
CREATE INDEX tasks_kind_status ON tasks (kind, status);
CREATE INDEX tasks_project_newest ON tasks (project_id, id);
CREATE INDEX tasks_library ON tasks (finished_at, id) WHERE status = 'SUCCEEDED';
CREATE INDEX tasks_durations ON tasks (provider, model, id) WHERE status = 'SUCCEEDED';
CREATE INDEX tasks_remote_alias ON tasks (provider, lower(remote_alias)) WHERE remote_alias IS NOT NULL;
