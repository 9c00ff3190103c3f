"""Getting a table back to a good state: rollback, cherry-pick and refs, restore, repair,
rewrite-table-path."""
