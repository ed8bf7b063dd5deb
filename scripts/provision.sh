#!/usr/bin/env bash
# Install the system packages the tests and `make run` need, on Debian. Idempotent: only what is
# missing is installed, so a provisioned machine pays nothing. Needs root for apt-get.
set -euo pipefail

PACKAGES=(
  postgresql        # the production database, tested for real
  redis-server      # Celery's broker
  docker.io         # the sandbox's docker backend and the worker's test runs
  docker-compose    # runs docker-compose.yaml (make compose-test)
  bubblewrap        # the sandbox's fallback backend
  uidmap            # user namespaces for bubblewrap
  debootstrap       # builds the sandbox image locally (no container registry reachable)
  iptables          # dockerd needs it for its bridge
  chromium          # headless browser tests of the catalog
  git               # install from git repositories
  iproute2          # network namespaces in the sandbox network tests; `ip addr` for host addresses
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "provision: system packages present"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "provision: missing system packages: ${missing[*]}" >&2
  echo "hint: run 'sudo apt-get install -y ${missing[*]}' (or run make as root)" >&2
  exit 1
fi

echo "provision: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "provision: done"
