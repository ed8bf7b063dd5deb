#!/usr/bin/env bash
# Run every test: first the tests marked `serial` (they need the host to themselves), alone; then
# the rest of the suite on the embedded defaults (SQLite, files), spread over the CPUs
# (pytest-xdist, one test file per worker at a time), with the registry suite on PostgreSQL
# running alongside in a process of its own; last, docker-compose.yaml run for real
# (scripts/compose-test.sh). pytest's exit 5 ("no tests collected") is a
# failure here: a run that tested nothing must never pass. With arguments: one plain pytest run
# of exactly those.
# SKILLYARD_TEST_WORKERS sets the number of workers (default: one per CPU).
set -uo pipefail
cd "$(dirname "$0")/.."

PYTEST=(.venv/bin/python -m pytest)
WORKERS="${SKILLYARD_TEST_WORKERS:-auto}"
export SKILLYARD_TEST_POSTGRES_URL="${SKILLYARD_TEST_POSTGRES_URL:-postgres://skillyard:skillyard@127.0.0.1:5432/skillyard}"

# pytest's exit code, with 5 (nothing collected) reported and turned into 1.
pytest_status() {
  "${PYTEST[@]}" "$@"
  local rc=$?
  if [ $rc = 5 ]; then
    echo "test.sh: pytest collected no tests for: $* (treated as a failure)" >&2
    return 1
  fi
  [ $rc = 0 ] || echo "test.sh: pytest failed ($rc): $*" >&2
  return $rc
}

run_pytest() {
  pytest_status "$@" || exit $?
}

# A stage's header, with the seconds since this script started.
stage() {
  echo "== [${SECONDS}s] $*"
}

{
  stage "format, lint and types (ruff format --check, ruff check, mypy)"
  .venv/bin/ruff format --check --quiet client skillyard registry catalog worker tests bench ||
    { echo "test.sh: formatting differs (run \`.venv/bin/ruff format\` on the files above)" >&2; exit 1; }
  .venv/bin/ruff check client skillyard registry catalog worker tests bench ||
    { echo "test.sh: lint failed (run \`.venv/bin/ruff check --fix ...\` for the fixable ones)" >&2; exit 1; }
  PYTHONPATH=client:. .venv/bin/mypy client/skillctl ||
    { echo "test.sh: mypy found errors in client/skillctl" >&2; exit 1; }
  DJANGO_SETTINGS_MODULE=skillyard.settings PYTHONPATH=client:. .venv/bin/mypy registry catalog worker skillyard ||
    { echo "test.sh: mypy found errors in the server apps" >&2; exit 1; }
}

if [ $# -gt 0 ]; then
  stage "pytest $*"
  run_pytest "$@"
  echo "test.sh: all test runs passed (${SECONDS}s)"
  exit 0
fi

stage "tests that need the host to themselves (marker serial), alone"
run_pytest -m serial -q

pg_pid=""
pg_log=$(mktemp)
trap 'rm -f "$pg_log"' EXIT
if [ -d tests/registry ]; then
  stage "registry tests (and the check tasks) on PostgreSQL: started alongside, output below when done"
  # Not the embedded default: a deployment's settings need a key and host names, and say no to
  # HTTPS (on by default there) since the test client speaks plain http.
  DATABASE_URL="$SKILLYARD_TEST_POSTGRES_URL" SKILLYARD_SECRET_KEY=test-only-not-secret \
    SKILLYARD_ALLOWED_HOSTS=testserver,127.0.0.1,localhost SKILLYARD_HTTPS=0 \
    pytest_status tests/registry tests/worker/test_tasks.py -q -p no:xdist >"$pg_log" 2>&1 &
  pg_pid=$!
fi

stage "all tests but the serial ones (SQLite, filesystem storage), $WORKERS workers"
pytest_status -n "$WORKERS" --dist loadfile -m "not serial" --durations=15
sqlite_rc=$?

pg_rc=0
if [ -n "$pg_pid" ]; then
  wait "$pg_pid"
  pg_rc=$?
  stage "registry tests (and the check tasks) on PostgreSQL: output"
  cat "$pg_log"
fi
[ $sqlite_rc = 0 ] || exit $sqlite_rc
[ $pg_rc = 0 ] || exit $pg_rc

# Skipped without Docker, failed instead under SKILLYARD_REQUIRE_SERVICES=1 (as the tests are).
stage "docker-compose: the README's production commands for real (scripts/compose-test.sh)"
bash scripts/compose-test.sh || { echo "test.sh: the compose test failed" >&2; exit 1; }
echo "test.sh: all test runs passed (${SECONDS}s)"
