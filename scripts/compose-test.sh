#!/usr/bin/env bash
# `make compose-test`: the README's docker-compose commands, run for real. Builds the images
# (cached), starts the stack, publishes a skill and installs it through nginx with `skillctl`, kills
# the worker container that is in the middle of the skill's manifest check and sees the check
# completed by the other worker once the beat's sweep has re-queued it by itself (the recovery
# timings are shortened below), then tears everything down, volumes included.
#
# The only fake is the LLM, at the HTTP edge (tests/e2e/compose/fake_llm.py, a container on the
# stack's own network): it holds the first manifest request open so a worker is caught mid-check.
# All traffic stays on loopback and the compose network; nothing is pulled. Without Docker or
# docker-compose the test is skipped, except under SKILLYARD_REQUIRE_SERVICES=1 (CI): then it fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# Its own project, files and port: a deployment of the same checkout is left alone. COMPOSE_FILE
# adds the fake LLM, so the commands below are the README's, word for word.
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-skillyard-compose-test}"
export COMPOSE_FILE=docker-compose.yaml:tests/e2e/compose/fake-llm.yaml
PY=.venv/bin/python
SKILLCTL="$PWD/.venv/bin/skillctl"
STEP_TIMEOUT=180  # seconds any one wait may take: a check on this tiny skill takes well under one
# The recovery timings (skillyard/settings.py), shortened so the killed worker's check comes back
# within a step: taken over 30 s after it started (a check of this skill takes ~1 s, so no live
# run is taken), a lost message re-queued after 30 s pending, the beat sweeping every 5 s, Redis
# redelivering after 60 s. Production keeps the defaults (minutes).
export SKILLYARD_CHECK_STALE_SECONDS=30 SKILLYARD_CHECK_PENDING_SECONDS=30 SKILLYARD_CHECK_SWEEP_SECONDS=5
export SKILLYARD_BROKER_VISIBILITY_TIMEOUT=60

say() { echo "compose-test: [${SECONDS}s] $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

unavailable() {
    if [ "${SKILLYARD_REQUIRE_SERVICES:-0}" = 1 ]; then
        fail "$* (SKILLYARD_REQUIRE_SERVICES=1)"
    fi
    say "skipped: $*"
    exit 0
}

# Polls COMMAND... until it succeeds, at most STEP_TIMEOUT seconds.
wait_until() {
    local what="$1" deadline=$((SECONDS + STEP_TIMEOUT))
    shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || fail "waited ${STEP_TIMEOUT}s for $what"
        sleep 1
    done
}

teardown() {
    local rc=$?
    if [ $rc != 0 ]; then
        docker-compose ps >&2 || true
        docker-compose logs --tail 40 >&2 || true
    fi
    docker-compose down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
    rm -rf "$WORK"
    exit $rc
}

# GET a path of the registry's API; prints the JSON.
api() {
    "$PY" -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
        "$SKILLYARD_PUBLIC_URL/api/v1/$1"
}

# The status of CHECK of hello@0.1.0 (pending|running|done|error|skipped).
check_status() {
    api skills/hello/versions/0.1.0 | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["checks"][sys.argv[1]]["status"])' "$1"
}

check_is() { [ "$(check_status "$1")" = "$2" ]; }

# The address that sent chat request N to the fake LLM (it logs each).
llm_client() {
    docker-compose logs --no-color llm | sed -n "s/.*chat request $1 from \([0-9.]*\).*/\1/p" | head -1
}

# The worker container whose address sent the held chat request.
worker_mid_check() {
    local address container
    address=$(llm_client 1)
    [ -n "$address" ] || return 1
    for container in $(docker-compose ps -q worker); do
        if docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$container" | grep -qw "$address"; then
            echo "$container"
            return 0
        fi
    done
    return 1
}

# Every running container of the stack that has a healthcheck passes it (the test's fake has none).
all_healthy() {
    local container health
    for container in $(docker-compose ps -q); do
        health=$(docker inspect -f '{{if .State.Running}}{{if .State.Health}}{{.State.Health.Status}}{{end}}{{end}}' "$container")
        [ -z "$health" ] || [ "$health" = healthy ] || return 1
    done
}

command -v docker >/dev/null || unavailable "the docker CLI is missing"
docker info >/dev/null 2>&1 || unavailable "no Docker daemon answers (scripts/services.sh start)"
command -v docker-compose >/dev/null || unavailable "docker-compose is missing (make provision)"
[ -x "$SKILLCTL" ] || fail "no .venv/bin/skillctl (make venv)"

# skillctl with its config, cache and state in the test's folder, never the user's.
skillctl() {
    HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/config" XDG_CACHE_HOME="$WORK/cache" XDG_DATA_HOME="$WORK/data" \
        "$SKILLCTL" "$@"
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/skillyard-compose-test.XXXXXX")
trap teardown EXIT
SKILLYARD_HTTP_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export SKILLYARD_HTTP_PORT SKILLYARD_PUBLIC_URL="http://127.0.0.1:$SKILLYARD_HTTP_PORT"
mkdir -p "$WORK/home"

say "building the images (cached after the first run) and starting the stack"
bash scripts/compose-image.sh        # the base image (a few minutes once, then cached)
export SKILLYARD_SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')
docker-compose up -d --build         # builds the other images, starts: http://127.0.0.1:8080/
wait_until "the registry behind nginx" api skills
[ "$(docker-compose ps -q worker | wc -l)" = 2 ] || fail "two worker containers expected"

say "publishing hello@0.1.0 with skillctl"
export SKILLYARD_REGISTRY=http://127.0.0.1:${SKILLYARD_HTTP_PORT:-8080}
export SKILLYARD_TOKEN=$(docker-compose exec -T web python manage.py issue_token alice --create-user --scope publish | tail -1)
[ -n "$SKILLYARD_TOKEN" ] || fail "no token issued"
mkdir -p "$WORK/src/hello"
cat >"$WORK/src/hello/SKILL.md" <<'SKILL'
---
name: hello
description: Greets the user by name when asked to say hello.
metadata:
  version: "0.1.0"
---
# Hello

Greet the user by name, in one short sentence.
SKILL
(cd "$WORK/src" && skillctl publish ./hello)

say "killing the worker in the middle of the manifest check"
wait_until "the manifest check to start" check_is manifest running
wait_until "the worker to ask the fake LLM" worker_mid_check
victim=$(worker_mid_check)
docker kill "$victim" >/dev/null
sleep 2
check_is manifest running || fail "the killed worker should have left the manifest check running"

# Nobody re-queues it by hand: the beat's sweep takes it back once it has been running longer than
# SKILLYARD_CHECK_STALE_SECONDS, and the other worker runs it.
say "waiting for the sweep to give the killed worker's check to the other worker"
wait_until "the manifest check to be done by the other worker" check_is manifest done
for name in scan tests; do
    wait_until "the $name check" check_is "$name" done
done
# The README's manual sweep finds nothing left: the automatic one took everything back.
swept=$(docker-compose exec -T web python manage.py rerun_checks --stale)
[ "$swept" = "re-queued 0 stale check(s)" ] || fail "the manual sweep still found checks: $swept"
second=$(llm_client 2)
[ -n "$second" ] && [ "$second" != "$(llm_client 1)" ] || fail "the other worker did not make the manifest"

say "installing hello through nginx with skillctl"
mkdir -p "$WORK/project"
(cd "$WORK/project" && skillctl install hello)
grep -q "Greets the user" "$WORK/project/.agents/skills/hello/SKILL.md" || fail "hello is not installed"

say "every running container healthy"
wait_until "every running container to be healthy" all_healthy

say "tearing down"
trap - EXIT
docker-compose down --volumes        # stops it and deletes its data
left=$(docker volume ls -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")
[ -z "$left" ] || fail "volumes left behind: $left"
rm -rf "$WORK"
say "passed"
