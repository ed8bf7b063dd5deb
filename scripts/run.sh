#!/usr/bin/env bash
# `make run`: the registry on embedded defaults (SQLite + files under .data/, tasks in-process),
# or on whatever DATABASE_URL / SKILLYARD_STORAGE / SKILLYARD_BROKER_URL say. Safe to run again:
# migrations and the demo seed are idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
# One process by default: uvicorn reads request bodies on its event loop (a slow upload holds a
# connection, not a worker) and Django runs each request in a thread, and one process keeps the
# throttle counters in one place. More processes need a shared cache (SKILLYARD_CACHE_URL).
WORKERS=${SKILLYARD_WEB_WORKERS:-1}
if [ "$WORKERS" != 1 ] && [ -z "${SKILLYARD_CACHE_URL:-}" ]; then
  echo "run.sh: SKILLYARD_WEB_WORKERS=$WORKERS needs SKILLYARD_CACHE_URL (Redis) so throttles count across processes" >&2
  exit 2
fi
if [ -z "${SKILLYARD_ALLOWED_HOSTS:-}" ] && [ "$HOST" != 127.0.0.1 ] && [ "$HOST" != localhost ]; then
  export SKILLYARD_ALLOWED_HOSTS="127.0.0.1,localhost,$HOST"
fi
# HTTPS settings (Secure cookies, HSTS, redirect) are on by default on PostgreSQL or S3; uvicorn
# here speaks plain http, so serving loopback only they are off unless SKILLYARD_HTTPS says so.
if [ -z "${SKILLYARD_HTTPS:-}" ] && { [ "$HOST" = 127.0.0.1 ] || [ "$HOST" = localhost ]; }; then
  export SKILLYARD_HTTPS=0
fi
# Sign-up in the catalog: open on loopback (a try-out on this machine), closed when served to
# others unless SKILLYARD_SIGNUP says otherwise (the settings' default is closed).
if [ -z "${SKILLYARD_SIGNUP:-}" ]; then
  if [ "$HOST" = 127.0.0.1 ] || [ "$HOST" = localhost ]; then SKILLYARD_SIGNUP=open; else SKILLYARD_SIGNUP=closed; fi
  export SKILLYARD_SIGNUP
fi

$PY manage.py migrate --noinput -v0
$PY manage.py collectstatic --noinput -v0
$PY manage.py seed_demo
$PY manage.py sweep_uploads -v0 >/dev/null  # what a killed worker left (partial writes, upload temp files)
$PY manage.py rerun_checks --stale >/dev/null  # publish checks the last run left running
$PY manage.py rerun_checks --vectors >/dev/null  # search vectors an older embedder made (after an upgrade)

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
# Ctrl-C or SIGTERM is how `make run` is meant to stop: stop the children, wait for their last
# lines, and exit 0 (no "make: *** Error 130").
stop() { trap - INT TERM; cleanup; wait 2>/dev/null || true; exit 0; }
trap cleanup EXIT
trap stop INT TERM

if [ -n "${SKILLYARD_BROKER_URL:-}" ]; then
  # -B: the beat schedule too (the sweep that re-queues checks a dead worker left running), its
  # state file in this registry's data folder so two registries on one host keep their own.
  .venv/bin/celery -A worker worker -B --schedule "${SKILLYARD_DATA_DIR:-.data}/celerybeat-schedule" \
    --loglevel INFO --concurrency 2 &
  pids+=($!)
fi

echo "Skillyard catalog: http://$HOST:$PORT/   (API: http://$HOST:$PORT/api/v1/skills, docs: http://$HOST:$PORT/api/v1/docs/)"
echo "Sign in as: $($PY manage.py demo_signin)   (a new password every start)"
echo "Sign-up: $SKILLYARD_SIGNUP   (SKILLYARD_SIGNUP=open|closed; open: http://$HOST:$PORT/accounts/signup/)"
# Kept in the data folder and printed again while it works: a token the user saved survives restarts.
TOKEN_FILE="${SKILLYARD_DATA_DIR:-.data}/demo-token"
echo "Publish token for the demo user: $($PY manage.py issue_token demo --scope publish --name 'make run' --keep "$TOKEN_FILE" 2>/dev/null | tail -1)   (the same on every start)"
# No gunicorn here, so no control socket for two registries on one host to share and delete.
# --no-proxy-headers: forwarded addresses are trusted only from SKILLYARD_TRUSTED_PROXIES.
.venv/bin/uvicorn skillyard.asgi:application --host "$HOST" --port "$PORT" --workers "$WORKERS" \
  --timeout-keep-alive 5 --timeout-graceful-shutdown 5 --no-server-header --no-proxy-headers --lifespan off &
pids+=($!)
wait -n "${pids[@]}"
