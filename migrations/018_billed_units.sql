-- What a provider reported that a task's actual cost comes from (billed_unit), and its count where it has one
-- (billed_units): money (the simulator's cost field, fal's usage records) or ElevenLabs' credits (its character-cost
-- header), which are bills; or what the provider bills by, priced here at the catalogue's price: Replicate's seconds
-- (metrics.predict_time of a prediction billed by time), images (an official model's outputs), OpenAI's tokens. Kept so credits show as credits
-- beside the money, and so a model billed by time is estimated from how long its earlier runs took here.
-- NULL where the provider reported nothing, and for tasks finished before these were kept.
ALTER TABLE tasks ADD COLUMN billed_units REAL;
ALTER TABLE tasks ADD COLUMN billed_unit TEXT CHECK (billed_unit IS NULL OR billed_unit IN ('money', 'credit', 'second', 'image', 'token'));
CREATE INDEX tasks_billed_seconds ON tasks (provider, model, id) WHERE billed_unit = 'second';
