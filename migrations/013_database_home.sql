-- Where this database file is (its path, device and inode), recorded when it is opened, so a copy of it (a data
-- folder copied, a backup restored beside the one it was taken from or in its place) is told from the original: a
-- copy draws a database id and a media space of its own, else both would key their next requests alike and save
-- their next results under one name in a media folder they share.
CREATE TABLE database_home (
  one   INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
  path  TEXT NOT NULL,
  dev   TEXT NOT NULL,
  ino   TEXT NOT NULL
);

-- The ids and media spaces this database had before it was copied: the requests its rows sent then are in receipts
-- that name the earlier id, and their results in the earlier space, where the studio still looks for them.
CREATE TABLE database_earlier (
  kind  TEXT NOT NULL CHECK (kind IN ('id', 'space')),
  name  TEXT NOT NULL,
  PRIMARY KEY (kind, name)
) WITHOUT ROWID;
