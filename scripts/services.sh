#!/usr/bin/env bash
# Start (or check) the services the tests use, on loopback only:
#   PostgreSQL 127.0.0.1:5432 (role/db `skillyard`, password `skillyard`, CREATEDB for test DBs)
#   Redis      127.0.0.1:6379
#   dockerd    the default unix socket
# Safe to run again: running services are left alone. No systemd needed.
set -uo pipefail

log() { echo "services: $*"; }
wait_for() {  # wait_for SECONDS COMMAND...
  local t=$1; shift
  for _ in $(seq 1 $((t * 4))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  return 1
}

start_postgres() {
  command -v pg_lsclusters >/dev/null || { log "PostgreSQL is not installed"; return 1; }
  local ver name
  read -r ver name _ < <(pg_lsclusters --no-header | head -1)
  if [ -z "${ver:-}" ]; then
    ver=$(ls /usr/lib/postgresql | sort -V | tail -1); name=main
    pg_createcluster "$ver" "$name" >/dev/null
  fi
  if ! pg_lsclusters --no-header | grep -q online; then
    pg_ctlcluster "$ver" "$name" start || { log "PostgreSQL did not start"; return 1; }
  fi
  wait_for 30 su postgres -c "psql -qtAc 'select 1'" || { log "PostgreSQL does not answer"; return 1; }
  su postgres -c "psql -qtAc \"select 1 from pg_roles where rolname='skillyard'\"" | grep -q 1 ||
    su postgres -c "psql -qc \"create role skillyard login createdb password 'skillyard'\""
  su postgres -c "psql -qtAc \"select 1 from pg_database where datname='skillyard'\"" | grep -q 1 ||
    su postgres -c "createdb -O skillyard skillyard"
  log "PostgreSQL $ver up on 127.0.0.1:5432"
}

start_redis() {
  command -v redis-server >/dev/null || { log "Redis is not installed"; return 1; }
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no \
      --logfile /var/log/redis-skillyard.log >/dev/null
  fi
  wait_for 15 redis-cli -h 127.0.0.1 -p 6379 ping || { log "Redis does not answer"; return 1; }
  log "Redis up on 127.0.0.1:6379"
}

start_docker() {
  command -v dockerd >/dev/null || { log "dockerd is not installed"; return 1; }
  if ! docker info >/dev/null 2>&1; then
    # A stale pid file from a killed daemon blocks a new one.
    if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
      rm -f /var/run/docker.pid
    fi
    # setsid: its own session, so the end of the shell (or job) that started it cannot kill it.
    pgrep -x dockerd >/dev/null || (setsid nohup dockerd >/var/log/dockerd.log 2>&1 < /dev/null &)
  fi
  wait_for 60 docker info || { log "dockerd does not answer (see /var/log/dockerd.log)"; return 1; }
  log "dockerd up"
}

case "${1:-start}" in
  start)
    rc=0
    start_postgres || rc=1
    start_redis || rc=1
    start_docker || rc=1
    if [ $rc != 0 ] && [ "${SKILLYARD_REQUIRE_SERVICES:-0}" = 1 ]; then
      log "a required service is missing (SKILLYARD_REQUIRE_SERVICES=1)"; exit 1
    fi
    exit 0 ;;
  status)
    pg_lsclusters 2>/dev/null; redis-cli -h 127.0.0.1 ping 2>&1; docker info --format '{{.ServerVersion}}' 2>&1 ;;
  *) echo "usage: $0 [start|status]" >&2; exit 2 ;;
esac
