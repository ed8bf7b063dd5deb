#!/bin/sh
# The registry's web server in production: what the compose image runs and what bench/soak.py
# starts (one call is one web server: SKILLYARD_WEB_WORKERS processes). Host, port, processes and
# threads come from the environment; everything else about serving is decided here once.
#
# gunicorn with threads (WSGI, skillyard/wsgi.py) by default: bench/api.py --production measured
# it at 3-4x uvicorn's requests per second on every endpoint and on static files (Django's sync
# views under ASGI pay a thread hand-off per request and middleware). A thread reads a request's
# body, so it belongs behind a proxy that buffers bodies (compose's nginx); the WSGI guard still
# answers oversized and unauthenticated publishes before their body and cuts off stalled ones.
# Serving clients directly, without such a proxy: SKILLYARD_WEB_SERVER=uvicorn (ASGI, bodies read
# on the event loop, skillyard/asgi.py), as `make run` does.
set -e
HOST="${SKILLYARD_WEB_HOST:-0.0.0.0}"
PORT="${SKILLYARD_WEB_PORT:-8000}"
WORKERS="${SKILLYARD_WEB_WORKERS:-4}"
case "${SKILLYARD_WEB_SERVER:-gthread}" in
  gthread)
    # --threads: requests one process serves at once (a process runs Python on one core; the
    # threads overlap the waits on PostgreSQL, Redis and S3), within SKILLYARD_DB_POOL_MAX_SIZE.
    # --keep-alive 5 and --timeout 60: as uvicorn's keep-alive; a request stuck a minute is killed.
    # --forwarded-allow-ips '': no proxy header changes the scheme here (uvicorn's
    # --no-proxy-headers); Django believes SKILLYARD_TRUSTED_PROXIES and SKILLYARD_PROXY_SSL_HEADER.
    exec gunicorn skillyard.wsgi:application --bind "$HOST:$PORT" --workers "$WORKERS" \
      --worker-class gthread --threads "${SKILLYARD_WEB_THREADS:-4}" --forwarded-allow-ips '' \
      --keep-alive 5 --timeout 60 --graceful-timeout 20 --log-level warning ;;
  uvicorn)
    exec uvicorn skillyard.asgi:application --host "$HOST" --port "$PORT" --workers "$WORKERS" \
      --no-proxy-headers --no-server-header --no-access-log --timeout-keep-alive 5 ;;
  *)
    echo "web.sh: SKILLYARD_WEB_SERVER must be gthread or uvicorn, not '$SKILLYARD_WEB_SERVER'" >&2
    exit 2 ;;
esac
