-- When the database file was made, where the filesystem keeps it: a drive whose inode numbers change from one mount to
-- the next (exFAT, FAT) still tells the same file from a copy put in its place.
ALTER TABLE database_home ADD COLUMN born TEXT;
