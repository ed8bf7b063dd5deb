"""Celery app and thin tasks (scan, routing manifest, skill test runs)."""

from worker.celery import app

__all__ = ["app"]
