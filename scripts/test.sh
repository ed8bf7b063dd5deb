#!/usr/bin/env bash
# Run every test: the whole suite on the embedded defaults (SQLite, files), then the registry
# suite again on PostgreSQL. pytest's exit 5 ("no tests collected") is a failure here: a run
# that tested nothing must never pass.
set -uo pipefail
cd "$(dirname "$0")/.."

PYTEST=(.venv/bin/python -m pytest)
export SKILLYARD_TEST_POSTGRES_URL="${SKILLYARD_TEST_POSTGRES_URL:-postgres://skillyard:skillyard@127.0.0.1:5432/skillyard}"

run_pytest() {
  "${PYTEST[@]}" "$@"
  local rc=$?
  if [ $rc = 5 ]; then
    echo "test.sh: pytest collected no tests for: $* (treated as a failure)" >&2
    exit 1
  fi
  [ $rc = 0 ] || { echo "test.sh: pytest failed ($rc): $*" >&2; exit $rc; }
}

{
  echo "== format, lint and types (ruff format --check, ruff check, mypy)"
  .venv/bin/ruff format --check --quiet client skillyard registry catalog worker tests bench ||
    { echo "test.sh: formatting differs (run \`.venv/bin/ruff format\` on the files above)" >&2; exit 1; }
  .venv/bin/ruff check client skillyard registry catalog worker tests bench ||
    { echo "test.sh: lint failed (run \`.venv/bin/ruff check --fix ...\` for the fixable ones)" >&2; exit 1; }
  PYTHONPATH=client:. .venv/bin/mypy client/skillctl ||
    { echo "test.sh: mypy found errors in client/skillctl" >&2; exit 1; }
  DJANGO_SETTINGS_MODULE=skillyard.settings PYTHONPATH=client:. .venv/bin/mypy registry catalog worker skillyard ||
    { echo "test.sh: mypy found errors in the server apps" >&2; exit 1; }
}

echo "== all tests (SQLite, filesystem storage)"
run_pytest "$@"

if [ -d tests/registry ] && [ $# = 0 ]; then
  echo "== registry tests (and the check tasks) on PostgreSQL"
  # Not the embedded default: a deployment's settings need a key and host names.
  DATABASE_URL="$SKILLYARD_TEST_POSTGRES_URL" SKILLYARD_SECRET_KEY=test-only-not-secret \
    SKILLYARD_ALLOWED_HOSTS=testserver,127.0.0.1,localhost run_pytest tests/registry tests/worker/test_tasks.py -q
fi
echo "test.sh: all test runs passed"
