-- The id of the machine that saved each file (its data folder's machine-id), beside its name: two computers may go
-- by one name, and a file another of them saved is that machine's, not a file of this one gone missing.
-- NULL for files saved before the id was recorded.
ALTER TABLE task_outputs ADD COLUMN machine_id TEXT;
