#!/usr/bin/env bash
# Build `skillyard/base:bookworm`, the base of every image docker-compose.yaml runs, locally.
#
# No container registry can be reached on our machines, so nothing is pulled: like the sandbox image
# (scripts/sandbox-image.sh, whose helpers this reuses) a minimal Debian of this machine's release
# is debootstrapped from the machine's own apt mirror, here with python3, its venv module and CA
# certificates, and `docker import`ed. `docker-compose build` then builds the registry (./Dockerfile),
# PostgreSQL, Redis, nginx and the S3 server (deploy/images/*/Dockerfile) FROM it, from Debian's packages
# and, for the Python parts, pip.
# Idempotent: does nothing when the image exists with this script's version label. The rootfs
# tarball is cached, so a rebuild after `docker rmi` takes seconds.
#
# Environment: SKILLYARD_COMPOSE_CACHE (cache folder), SKILLYARD_SANDBOX_MIRROR (override the mirror),
# FORCE=1 (rebuild even when up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/sandbox-image.sh
source scripts/sandbox-image.sh  # codename, apt_mirror

# Bump when the image's content changes: the label tells old images from new ones.
BASE_VERSION=1
BASE_RELEASE=bookworm  # deploy/images/*/Dockerfile name this release's packages (postgresql-15)
BASE_IMAGE="skillyard/base:$BASE_RELEASE"
BASE_LABEL="org.skillyard.base-image.version"
BASE_CACHE="${SKILLYARD_COMPOSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/skillyard/compose-image}"

say() { echo "compose-image: $*" >&2; }

base_label() {
    docker image inspect -f "{{ index .Config.Labels \"$BASE_LABEL\" }}" "$BASE_IMAGE" 2>/dev/null || true
}

# The machine's own trust: CAs added locally (a company's, an egress proxy's) go into the image too,
# or pip inside `docker-compose build` and the registry's outbound HTTPS would refuse what the
# machine accepts.
add_local_cas() {
    local root="$1"
    [ -d /usr/local/share/ca-certificates ] || return 0
    cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null
}

build_base_rootfs() {
    local tarball="$1" mirror root
    mirror="${SKILLYARD_SANDBOX_MIRROR:-$(apt_mirror "$BASE_RELEASE" | head -1)}"
    [ -n "$mirror" ] || { say "no apt mirror for $BASE_RELEASE found in /etc/apt/sources*"; exit 1; }
    command -v debootstrap >/dev/null || { say "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
    [ "$(id -u)" = 0 ] || { say "debootstrap needs root"; exit 1; }
    say "debootstrap $BASE_RELEASE from $mirror (minbase + python3 + python3-venv + ca-certificates)"
    root="$(mktemp -d "${TMPDIR:-/tmp}/skillyard-base.XXXXXX")"
    trap 'rm -rf "$root"' EXIT
    # The sandbox image's .deb cache: most of these packages are in it already.
    mkdir -p "$CACHE/debs"
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        --cache-dir="$CACHE/debs" "$BASE_RELEASE" "$root" "$mirror" >&2
    add_local_cas "$root"
    # Packages installed by the images' Dockerfiles must not try to start their services.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*
    tar --numeric-owner -C "$root" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$root"
    trap - EXIT
}

build_base() {
    command -v docker >/dev/null || { say "docker CLI is missing"; exit 1; }
    docker info >/dev/null 2>&1 || { say "no Docker daemon answers (start it: scripts/services.sh start)"; exit 1; }
    [ "$(codename)" = "$BASE_RELEASE" ] || { say "this machine runs $(codename); deploy/images/ is written for $BASE_RELEASE"; exit 1; }
    if [ "${FORCE:-0}" != 1 ] && [ "$(base_label)" = "$BASE_VERSION" ]; then
        say "$BASE_IMAGE is up to date (version $BASE_VERSION)"
        return 0
    fi
    mkdir -p "$BASE_CACHE"
    local tarball="$BASE_CACHE/rootfs-v$BASE_VERSION-$BASE_RELEASE-$(uname -m).tar"
    [ -f "$tarball" ] || build_base_rootfs "$tarball"
    say "importing $tarball as $BASE_IMAGE"
    docker import \
        --change "LABEL $BASE_LABEL=$BASE_VERSION" \
        --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8" \
        --change 'CMD ["bash"]' \
        "$tarball" "$BASE_IMAGE" >/dev/null
    say "built $BASE_IMAGE (version $BASE_VERSION)"
}

build_base "$@"
