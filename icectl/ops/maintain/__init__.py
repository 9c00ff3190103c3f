"""Keeping a table healthy: expire, remove-orphans, compact, rewrite-deletes, rewrite-manifests, health
and maintain (with its policy file and table lock)."""
