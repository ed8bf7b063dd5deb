#!/usr/bin/env bash
# `make run`: the registry on embedded defaults (SQLite + files under .data/, tasks in-process),
# or on whatever DATABASE_URL / SKILLYARD_STORAGE / SKILLYARD_BROKER_URL say. Safe to run again:
# migrations and the demo seed are idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
WORKERS=${SKILLYARD_WEB_WORKERS:-2}

$PY manage.py migrate --noinput -v0
$PY manage.py collectstatic --noinput -v0
$PY manage.py seed_demo
$PY manage.py sweep_uploads -v0 >/dev/null  # what a killed worker left (partial writes, upload temp files)

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM

if [ -n "${SKILLYARD_BROKER_URL:-}" ]; then
  .venv/bin/celery -A worker worker --loglevel INFO --concurrency 2 &
  pids+=($!)
fi

echo "Skillyard registry: http://$HOST:$PORT/api/v1/skills  (docs: http://$HOST:$PORT/api/v1/docs/)"
echo "Publish token for the demo user: $($PY manage.py issue_token demo --scope publish --name 'make run' --replace 2>/dev/null | tail -1)"
.venv/bin/gunicorn skillyard.wsgi:application --bind "$HOST:$PORT" --workers "$WORKERS" \
  --access-logfile - --graceful-timeout 5 &
pids+=($!)
wait -n "${pids[@]}"
