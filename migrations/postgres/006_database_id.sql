-- This database's own id, drawn at random once, when it is created or brought up to this version. Receipt journals
-- and idempotency keys name it: task ids are numbered per database, so a receipt of another database that shares a
-- data folder (a team worker beside the embedded studio), or a journal copied from another folder, would otherwise
-- name a task here that never sent that request. gen_random_uuid() is in PostgreSQL's core since 13.
CREATE TABLE database_identity (
  one INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
  id  TEXT NOT NULL CHECK (id ~ '^[0-9a-f]{32}$')
);
INSERT INTO database_identity (one, id) VALUES (1, replace(gen_random_uuid()::text, '-', ''));

-- Another id the provider gives the same request (ElevenLabs: the history item id beside the request id), so a
-- request is recognised as another task's by any of its names.
ALTER TABLE tasks ADD COLUMN remote_alias TEXT;
CREATE INDEX tasks_remote_alias ON tasks (provider, lower(remote_alias)) WHERE remote_alias IS NOT NULL;
