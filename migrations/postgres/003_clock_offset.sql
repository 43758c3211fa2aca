-- Each studio process's clock less the database's, as it last measured it (milliseconds), and when by the
-- database's clock: `studio team status` shows it per machine, so a machine whose clock is wrong is seen.
ALTER TABLE lease_owners ADD COLUMN clock_offset_ms BIGINT;
ALTER TABLE lease_owners ADD COLUMN clock_checked_at BIGINT;
