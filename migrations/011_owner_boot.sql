-- The running system a lease owner's pid belongs to: one boot of one kernel (and its pid namespace). A copied data
-- folder carries the machine id to another computer, so a pid is judged only by a process of the same id and boot;
-- an owner registered without one is left to its lease.
ALTER TABLE lease_owners ADD COLUMN boot_id TEXT;
