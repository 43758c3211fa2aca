-- The team database: the embedded schema (001..006) in PostgreSQL terms, for several machines sharing one
-- task table. Times are milliseconds since the Unix epoch (BIGINT). Money is in micro-units of `currency`
-- (1 USD = 1,000,000), BIGINT, so sums never drift. JSON is kept as TEXT, checked to be JSON, exactly as the
-- studio wrote it.

CREATE TABLE projects (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
  budget      BIGINT CHECK (budget IS NULL OR budget >= 0),
  currency    TEXT NOT NULL DEFAULT 'USD',
  created_at  BIGINT NOT NULL
);

-- The task table: one row is the unit of recovery for one paid or local step.
CREATE TABLE tasks (
  id                   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id           BIGINT NOT NULL REFERENCES projects(id),
  kind                 TEXT NOT NULL CHECK (kind IN ('image', 'clip', 'speech', 'render')),
  provider             TEXT NOT NULL,
  model                TEXT NOT NULL,
  input_json           TEXT NOT NULL CHECK (input_json::json IS NOT NULL),
  input_hash           TEXT NOT NULL,
  status               TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN
                         ('PENDING', 'RUNNING', 'SUBMITTED', 'SUCCEEDED', 'FAILED', 'OUTCOME_UNKNOWN', 'CANCELLED')),
  -- 'no': nothing was sent or the provider refused it; 'maybe': sent, outcome not known; 'yes': accepted.
  charged              TEXT NOT NULL DEFAULT 'no' CHECK (charged IN ('no', 'maybe', 'yes')),
  attempts             INTEGER NOT NULL DEFAULT 0,
  max_attempts         INTEGER NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
  next_attempt_at      BIGINT NOT NULL,
  -- Lease times are the database's clock, so a machine whose clock runs ahead cannot take a lease early.
  lease_owner          TEXT,
  lease_expires_at     BIGINT,
  heartbeat_at         BIGINT,
  submit_started_at    BIGINT,
  idempotency_key      TEXT,
  remote_request_id    TEXT,
  -- What else the provider said is needed to reach the request again (fal's status and response URLs).
  remote_handle        TEXT CHECK (remote_handle IS NULL OR remote_handle::json IS NOT NULL),
  submitted_at         BIGINT,
  progress             DOUBLE PRECISION CHECK (progress IS NULL OR (progress >= 0 AND progress <= 1)),
  cost_estimated       BIGINT,
  cost_estimate_source TEXT,
  cost_actual          BIGINT,
  -- How cost_actual was reached: the provider's own figure, or one worked out from what it reported.
  cost_actual_source   TEXT,
  -- Estimates of earlier attempts a person resubmitted after an unknown outcome: possibly charged too.
  cost_abandoned       BIGINT NOT NULL DEFAULT 0,
  currency             TEXT NOT NULL DEFAULT 'USD',
  output_path          TEXT,
  output_sha256        TEXT,
  error                TEXT,
  unknown_reason       TEXT,
  -- What the engine is waiting on, in words for the person. Cleared when the task ends.
  note                 TEXT,
  created_at           BIGINT NOT NULL,
  updated_at           BIGINT NOT NULL,
  finished_at          BIGINT,
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
  CHECK (status <> 'SUBMITTED' OR remote_request_id IS NOT NULL)
);

CREATE TABLE task_dependencies (
  task_id     BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  depends_on  BIGINT NOT NULL REFERENCES tasks(id),
  PRIMARY KEY (task_id, depends_on),
  CHECK (task_id <> depends_on)
);

-- The claim reads fresh work in creation order and released or expired leases by expiry (released ones, with
-- no lease, first); finished rows stay out of both indexes, so 100,000 finished tasks cost the claim nothing.
CREATE INDEX tasks_claim_pending ON tasks (kind, created_at, id) WHERE status = 'PENDING';
CREATE INDEX tasks_leased ON tasks (kind, lease_expires_at NULLS FIRST) WHERE status IN ('RUNNING', 'SUBMITTED');
CREATE INDEX tasks_lease_owner ON tasks (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX tasks_project ON tasks (project_id, status);
CREATE INDEX tasks_unknown ON tasks (updated_at) WHERE status = 'OUTCOME_UNKNOWN';
CREATE INDEX task_dependencies_reverse ON task_dependencies (depends_on);
-- Generate looks up an identical step already in the project (same provider, model and input) to reuse it.
CREATE INDEX tasks_reuse ON tasks (project_id, input_hash);
-- How many renders have finished, asked on every change.
CREATE INDEX tasks_kind_status ON tasks (kind, status);
-- The task board pages through a project's tasks newest first.
CREATE INDEX tasks_project_newest ON tasks (project_id, id);
-- The library lists saved results newest first.
CREATE INDEX tasks_library ON tasks (finished_at, id) WHERE status = 'SUCCEEDED';
-- How long a model's latest requests took, found by model, newest first.
CREATE INDEX tasks_durations ON tasks (provider, model, id) WHERE status = 'SUCCEEDED';

-- The uniqueness rule that stops two machines buying the same step.
--
-- One request is held by one task: a provider's request id belongs to at most one task of that provider,
-- compared without case (providers print ids in one case, a person may type another). The store checks
-- this inside the writes that take a request (an adoption, a journaled receipt) under a lock on the id;
-- this index makes it hold whatever writes the table, so one request is never counted for two tasks and a
-- result is never paid for twice over two tasks. It is also the index those checks read.
--
-- No index makes an input unique among a project's live tasks. A Generate never buys a step the project
-- has under way, done, or waiting for a decision: it judges and enqueues while it holds the project's row,
-- so two machines' Generates of one project judge one after the other and the second reuses what the first
-- enqueued, as the single writer of the embedded store makes them do; a new take differs in its seed, so
-- it is a new input anyway. But a person may enqueue the same input twice on purpose (two images of one
-- prompt without a seed are two different images), which such an index would refuse.
CREATE UNIQUE INDEX tasks_remote_request ON tasks (provider, lower(remote_request_id)) WHERE remote_request_id IS NOT NULL;

-- Every transition, with its reason and who made it.
CREATE TABLE task_events (
  id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id      BIGINT NOT NULL REFERENCES tasks(id),
  at           BIGINT NOT NULL,
  from_status  TEXT,
  to_status    TEXT NOT NULL,
  actor        TEXT NOT NULL CHECK (actor IN ('engine', 'person')),
  reason       TEXT NOT NULL,
  detail_json  TEXT CHECK (detail_json IS NULL OR detail_json::json IS NOT NULL)
);
CREATE INDEX task_events_task ON task_events (task_id, id);

-- Append-only: a history that can be edited proves nothing about what was paid.
CREATE FUNCTION task_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'task_events is append-only: % refused; an event, once written, is kept as it is', TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER task_events_no_update_or_delete BEFORE UPDATE OR DELETE ON task_events
  FOR EACH ROW EXECUTE FUNCTION task_events_append_only();
CREATE TRIGGER task_events_no_truncate BEFORE TRUNCATE ON task_events
  FOR EACH STATEMENT EXECUTE FUNCTION task_events_append_only();

-- Processes that hold leases; the id names the host. An owner gone from this machine is recovered at once;
-- owners on other machines are judged by their leases' expiry.
CREATE TABLE lease_owners (
  id          TEXT PRIMARY KEY,
  hostname    TEXT NOT NULL,
  pid         INTEGER NOT NULL,
  started_at  BIGINT NOT NULL,
  seen_at     BIGINT NOT NULL
);

-- A project's storyboard: its ordered scenes and the provider and model of each step, as JSON the studio
-- validates on every save.
CREATE TABLE storyboards (
  project_id  BIGINT PRIMARY KEY REFERENCES projects(id),
  json        TEXT NOT NULL CHECK (json::json IS NOT NULL),
  updated_at  BIGINT NOT NULL
);

-- Every file of a paid result, with the machine that saved it (NULL for rows copied from before machines
-- were recorded): in a shared media folder, a machine that cannot read a file can say which machine has it.
CREATE TABLE task_outputs (
  task_id       BIGINT NOT NULL REFERENCES tasks(id),
  idx           INTEGER NOT NULL CHECK (idx >= 0),
  path          TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  machine       TEXT,
  bytes         BIGINT,
  content_type  TEXT,
  PRIMARY KEY (task_id, idx)
);

-- Every take of a scene, kept for good: a new take adds a row; a later take never replaces one.
CREATE TABLE takes (
  project_id      BIGINT NOT NULL REFERENCES projects(id),
  scene           TEXT NOT NULL,
  take            INTEGER NOT NULL CHECK (take >= 1),
  -- The storyboard's take number that varied the seed when this take was made.
  variant         INTEGER NOT NULL CHECK (variant >= 1),
  image_prompt    TEXT NOT NULL,
  motion_prompt   TEXT NOT NULL,
  narration       TEXT,
  duration        DOUBLE PRECISION NOT NULL CHECK (duration > 0),
  seed            BIGINT NOT NULL,
  image_task_id   BIGINT NOT NULL REFERENCES tasks(id),
  clip_task_id    BIGINT NOT NULL REFERENCES tasks(id),
  speech_task_id  BIGINT REFERENCES tasks(id),
  created_at      BIGINT NOT NULL,
  PRIMARY KEY (project_id, scene, take)
);

-- Which take of each scene goes into the render: the person's pick, or the newest take until they pick.
CREATE TABLE take_picks (
  project_id  BIGINT NOT NULL,
  scene       TEXT NOT NULL,
  take        INTEGER NOT NULL,
  picked_at   BIGINT NOT NULL,
  PRIMARY KEY (project_id, scene),
  FOREIGN KEY (project_id, scene, take) REFERENCES takes (project_id, scene, take)
);
