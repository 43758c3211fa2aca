-- A machine is known by an id drawn at random once and kept in its data folder; its name is only a label, which
-- two computers may share. A process's pid is judged only by the machine whose id it registered with.
ALTER TABLE lease_owners ADD COLUMN machine_id TEXT;
-- When the next lookup of an unknown outcome may start. A process takes a due lookup by moving this on in one
-- conditional write, so the processes sharing this file make one lookup per task per interval.
ALTER TABLE tasks ADD COLUMN lookup_due_at INTEGER;
