#!/bin/sh
# The registry's web server in production: what the compose image runs and what bench/soak.py
# starts (one call is one web process with its workers). Host, port and worker count come from the
# environment; everything else about serving (server, worker class, timeouts) is decided here once.
set -e
exec uvicorn skillyard.asgi:application \
  --host "${SKILLYARD_WEB_HOST:-0.0.0.0}" --port "${SKILLYARD_WEB_PORT:-8000}" \
  --workers "${SKILLYARD_WEB_WORKERS:-4}" \
  --no-proxy-headers --no-server-header --no-access-log --timeout-keep-alive 5
