-- How a task's actual cost was reached: the provider's own figure, or one worked out from the characters,
-- tokens or outputs it reported. NULL while cost_actual is NULL: then the estimate stands, shown as one.
ALTER TABLE tasks ADD COLUMN cost_actual_source TEXT;
