"""Reading a table without changing it: describe, snapshots, files, diff, validate."""
