#!/usr/bin/env bash
# Build the sandbox image `skillyard/sandbox-python:3.11` locally (what `make sandbox-image` runs).
#
# No container registry can be reached on our machines, so instead of pulling python:3.11-slim we
# debootstrap a minimal Debian with the full python3 and nodejs packages, from this machine's own release and
# apt mirror (read from its apt sources), add a non-root user and /work, and `docker import` it.
# Idempotent: does nothing when the image exists with this script's version label. The rootfs
# tarball is cached, so a rebuild after `docker rmi` takes seconds.
#
# Environment: SKILLYARD_SANDBOX_IMAGE (image name), SKILLYARD_SANDBOX_CACHE (cache folder),
# SKILLYARD_SANDBOX_MIRROR (override the mirror), FORCE=1 (rebuild even when up to date).
set -euo pipefail

# Bump when the image's content changes: the label tells old images from new ones.
SCRIPT_VERSION=2  # 2: nodejs next to python3 (skills with `runtime: node`)
IMAGE="${SKILLYARD_SANDBOX_IMAGE:-skillyard/sandbox-python:3.11}"
LABEL_KEY="org.skillyard.sandbox-image.version"
SANDBOX_UID=1000  # the non-root user the docker backend runs as (skillctl.sandbox.policy)
CACHE="${SKILLYARD_SANDBOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/skillyard/sandbox-image}"

log() { echo "sandbox-image: $*" >&2; }

current_label() {
    docker image inspect -f "{{ index .Config.Labels \"$LABEL_KEY\" }}" "$IMAGE" 2>/dev/null || true
}

codename() {
    . /etc/os-release
    echo "${VERSION_CODENAME:?cannot read VERSION_CODENAME from /etc/os-release}"
}

# The first mirror of the apt sources serving the release itself (not -security/-updates).
# Reads deb822 (*.sources) and one-line (sources.list, *.list) formats.
apt_mirror() {
    local release="$1" f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v rel="$release" '
            function flush() { if (uris != "" && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " rel " ")) { split(uris, u, " "); print u[1]; found = 1; exit } uris = ""; suites = ""; types = "" }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            tolower($1) == "types:" { $1 = ""; types = $0 }
            tolower($1) == "uris:" { $1 = ""; sub(/^ +/, ""); uris = $0 }
            tolower($1) == "suites:" { $1 = ""; suites = $0 }
            END { if (!found) flush() }
        ' "$f" | head -1
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # deb [options] URI suite components...
        sed -e 's/\[[^]]*\]//' "$f" | awk -v rel="$release" '$1 == "deb" && $3 == rel { print $2; exit }'
    done
}

build_rootfs() {
    local tarball="$1" release mirror root
    release="$(codename)"
    mirror="${SKILLYARD_SANDBOX_MIRROR:-$(apt_mirror "$release" | head -1)}"
    [ -n "$mirror" ] || { log "no apt mirror for $release found in /etc/apt/sources*"; exit 1; }
    command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
    [ "$(id -u)" = 0 ] || { log "debootstrap needs root"; exit 1; }
    log "debootstrap $release from $mirror (minbase + python3 + nodejs)"
    root="$(mktemp -d "${TMPDIR:-/tmp}/skillyard-rootfs.XXXXXX")"
    trap 'rm -rf "$root"' EXIT
    mkdir -p "$CACHE/debs"
    debootstrap --variant=minbase --include=python3,nodejs --cache-dir="$CACHE/debs" \
        "$release" "$root" "$mirror" >&2
    chroot "$root" groupadd --gid "$SANDBOX_UID" sandbox
    chroot "$root" useradd --uid "$SANDBOX_UID" --gid "$SANDBOX_UID" --home-dir /work \
        --no-create-home --shell /usr/sbin/nologin sandbox
    mkdir -p "$root/work" "$root/skill"
    chown "$SANDBOX_UID:$SANDBOX_UID" "$root/work"
    # Nothing a skill needs at run time: apt lists and caches, docs, man pages.
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*
    tar --numeric-owner -C "$root" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$root"
    trap - EXIT
}

main() {
    command -v docker >/dev/null || { log "docker CLI is missing"; exit 1; }
    docker info >/dev/null 2>&1 || { log "no Docker daemon answers (start it: scripts/services.sh start)"; exit 1; }
    if [ "${FORCE:-0}" != 1 ] && [ "$(current_label)" = "$SCRIPT_VERSION" ]; then
        log "$IMAGE is up to date (version $SCRIPT_VERSION)"
        return 0
    fi
    mkdir -p "$CACHE"
    local tarball="$CACHE/rootfs-v$SCRIPT_VERSION-$(codename)-$(uname -m).tar"
    [ -f "$tarball" ] || build_rootfs "$tarball"
    log "importing $tarball as $IMAGE"
    docker import \
        --change "LABEL $LABEL_KEY=$SCRIPT_VERSION" \
        --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1" \
        --change "USER $SANDBOX_UID:$SANDBOX_UID" \
        --change "WORKDIR /work" \
        --change 'CMD ["python3"]' \
        "$tarball" "$IMAGE" >/dev/null
    log "built $IMAGE (version $SCRIPT_VERSION)"
}

# Sourced (scripts/compose-image.sh reuses codename and apt_mirror): define, do not run.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
