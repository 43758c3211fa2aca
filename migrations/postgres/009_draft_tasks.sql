-- A task may now be a storyboard draft ('draft'): a text model turns an idea into scenes, paid like any other step.
-- PostgreSQL changes a CHECK in place; the constraint keeps the name PostgreSQL gave it in 001 (table_column_check).
ALTER TABLE tasks DROP CONSTRAINT tasks_kind_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_kind_check CHECK (kind IN ('image', 'clip', 'speech', 'render', 'draft'));
