-- Every save of a storyboard counts one revision and names the one it was made from, so a save made from an
-- older one (another tab, another machine) is refused instead of silently undoing what was saved since.
-- A storyboard saved before this counts as revision 1; 0 means there is none yet.
ALTER TABLE storyboards ADD COLUMN revision BIGINT NOT NULL DEFAULT 1 CHECK (revision >= 1);
