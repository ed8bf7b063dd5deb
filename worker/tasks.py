"""Thin Celery tasks: ids in, a service call, results saved by the service."""

from worker.celery import app


@app.task(name="worker.ping", time_limit=10)
def ping() -> str:
    """Health check: proves a worker (or the eager in-process runner) takes tasks."""
    return "pong"
