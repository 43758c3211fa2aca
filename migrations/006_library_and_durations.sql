-- The library lists saved results newest first: read in this order, its first page touches a page's worth of
-- rows instead of sorting every finished task.
CREATE INDEX tasks_library ON tasks (finished_at, id) WHERE status = 'SUCCEEDED';

-- How long a model's latest requests took (polling and estimates of when a step is ready): found by model,
-- newest first, whatever else the table holds.
CREATE INDEX tasks_durations ON tasks (provider, model, id) WHERE status = 'SUCCEEDED';
