-- A machine is known by an id drawn at random once and kept in its data folder; its name is only a label, which
-- two computers may share. A process's pid is judged only by the machine whose id it registered with.
ALTER TABLE lease_owners ADD COLUMN machine_id TEXT;
-- When the next lookup of an unknown outcome may start, by the database's clock. A machine takes a due lookup by
-- moving this on in one conditional write, so across the team one lookup per task is made per interval.
ALTER TABLE tasks ADD COLUMN lookup_due_at BIGINT;
