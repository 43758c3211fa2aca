-- This database's own folder in a media folder it may share with other databases: task and project ids are
-- numbered per database, so two databases saving into one folder would otherwise give two files one name.
-- Chosen once, at random.
CREATE TABLE media_space (
  name  TEXT NOT NULL PRIMARY KEY CHECK (name GLOB 'local-*')
) WITHOUT ROWID;
INSERT INTO media_space (name) VALUES ('local-' || lower(hex(randomblob(6))));
