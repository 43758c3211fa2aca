-- The machine that saved each file of a result: in a media folder a team shares, a machine that cannot read a file
-- can say which machine has it. NULL for files saved before machines were recorded.
ALTER TABLE task_outputs ADD COLUMN machine TEXT;
