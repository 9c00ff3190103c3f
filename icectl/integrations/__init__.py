"""Integrations with schedulers (each an optional extra: ``icectl[airflow]``)."""
