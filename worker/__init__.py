"""Celery app and thin tasks (scan, routing manifest, skill test runs)."""
