-- +goose Up
-- A status transition can be a HOT update (a new row version on the same
-- page, no new index entries) only if no index reads a column it changes:
-- status, status_message, observed_generation and the observed columns. Two
-- indexes read status, and made 4 of the 5 updates of a lifecycle write an
-- entry into every index of the table (issue 19). EXPLAIN at 100,000 tenants
-- showed what each served:
--
-- tenants_status_idx (status, id) served no page of a listing by status in
-- its generic plan (the one a prepared statement settles on): a page in id
-- order walks tenants_live and filters. A listing by status reads more rows
-- the rarer the status; the page is still bounded by its LIMIT.
DROP INDEX tenants_status_idx;
-- tenants_work_idx served ListWork, which runs at a controller's start and
-- every few minutes; without it a sweep walks tenants_live once.
DROP INDEX tenants_work_idx;
-- tenants_name_idx (name, deleted_at DESC, id DESC) served Get by name with
-- deleted tenants; tenants_name_prefix_idx serves it as well, as the query
-- compares names in byte order (COLLATE "C"), which for equality is the
-- same test as the database's deterministic collation.
DROP INDEX tenants_name_idx;
-- Room on each page for the new versions of its rows: HOT needs the new
-- version on the old one's page. Pages written from now on keep a fifth
-- free; existing ones are not rewritten.
ALTER TABLE tenants SET (fillfactor = 80);

-- +goose Down
ALTER TABLE tenants RESET (fillfactor);
CREATE INDEX tenants_name_idx ON tenants (name, deleted_at DESC, id DESC);
CREATE INDEX tenants_work_idx ON tenants (id)
    WHERE deleted_at IS NULL
      AND (generation <> observed_generation OR status IN ('requested', 'provisioning', 'updating', 'deleting'));
CREATE INDEX tenants_status_idx ON tenants (status, id);
