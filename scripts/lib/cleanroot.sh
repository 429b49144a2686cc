# shellcheck shell=bash
# scripts/lib/cleanroot.sh: a clean Debian 12 root to install the package into, run in a
# private mount + PID namespace with chroot, so nothing on the host changes.
#
#   source scripts/lib/cleanroot.sh
#   tarball="$(cleanroot_tarball sudo expect -- libfprint-2-2 libsodium23 ...)"
#        # debootstrap --variant=minbase bookworm from this machine's apt mirror, with the
#        # packages before "--" installed and those after it only downloaded (into the root's
#        # /var/cache/apt/archives, so that installing a .deb that depends on them needs no
#        # network). Cached as CLEANROOT_CACHE/bookworm-minbase-KEY.tar.zst, KEY a hash of the
#        # mirror, the architecture, both package lists and CLEANROOT_RECIPE. Tarballs unused
#        # for 30 days are removed when a new one is built.
#   cleanroot_unpack "$tarball" DIR          # a fresh copy of the root in DIR
#   cleanroot_run DIR SECONDS COMMAND...     # COMMAND in the root (see below), killed after SECONDS
#
# cleanroot_run: `unshare --mount --pid --fork --propagation private`, then inside: / made
# rprivate, a new proc on DIR/proc, a tmpfs DIR/dev with only null, zero, full, random, urandom
# and tty bound from the host, a new devpts instance (its own ptys for expect), tmpfs on DIR/run
# and DIR/tmp, then `chroot DIR COMMAND`. When COMMAND ends, the namespace's init ends, every
# process left in it is killed and every mount goes with it. The host's /etc is never written.
#
# Environment: CLEANROOT_CACHE (default /var/cache/biounlock-test), CLEANROOT_MIRROR (default:
# the first bookworm "main" source in /etc/apt/sources.list{,.d/*}), CLEANROOT_REBUILD=1 to
# build the tarball again even when cached.

CLEANROOT_CACHE="${CLEANROOT_CACHE:-/var/cache/biounlock-test}"
CLEANROOT_SUITE=bookworm
# Bump when the recipe below changes in a way that makes old tarballs wrong.
CLEANROOT_RECIPE=2

cleanroot_log() { echo "cleanroot: $*" >&2; }

# Prints the mirror this machine's apt uses for bookworm main (deb822 or one-line sources).
cleanroot_mirror() {
    if [ -n "${CLEANROOT_MIRROR:-}" ]; then printf '%s\n' "$CLEANROOT_MIRROR"; return 0; fi
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri="$(awk -v suite="$CLEANROOT_SUITE" '
            BEGIN { RS = ""; FS = "\n" }
            {
                types = ""; uris = ""; suites = ""; comps = ""
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^Types:/) types = $i
                    else if ($i ~ /^URIs:/) uris = $i
                    else if ($i ~ /^Suites:/) suites = $i
                    else if ($i ~ /^Components:/) comps = $i
                    else if ($i ~ /^Enabled: *no/) types = ""
                }
                if (types ~ /[ \t]deb([ \t]|$)/ && (" " suites " ") ~ ("[ \t]" suite "[ \t]") && comps ~ /[ \t]main([ \t]|$)/) {
                    sub(/^URIs:[ \t]*/, "", uris); split(uris, u, /[ \t]+/); print u[1]; exit
                }
            }' "$f")"
        [ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        uri="$(awk -v suite="$CLEANROOT_SUITE" '
            $1 == "deb" {
                i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                if ($(i + 1) == suite) { for (j = i + 2; j <= NF; j++) if ($j == "main") { print $i; exit } }
            }' "$f")"
        [ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
    done
    cleanroot_log "no apt source for $CLEANROOT_SUITE main in /etc/apt/sources.list*; set CLEANROOT_MIRROR"
    return 1
}

# cleanroot_tarball INSTALL... -- DOWNLOAD...: prints the path of the cached root tarball,
# building it first when it is not cached.
cleanroot_tarball() {
    local -a install=() download=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do install+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    download=("$@")
    local mirror arch key tarball
    mirror="$(cleanroot_mirror)" || return 1
    arch="$(dpkg --print-architecture)"
    key="$(printf 'suite=%s variant=minbase mirror=%s arch=%s recipe=%s\ninstall=%s\ndownload=%s\n' \
        "$CLEANROOT_SUITE" "$mirror" "$arch" "$CLEANROOT_RECIPE" \
        "$(printf '%s\n' "${install[@]}" | LC_ALL=C sort -u | tr '\n' ' ')" \
        "$(printf '%s\n' "${download[@]}" | LC_ALL=C sort -u | tr '\n' ' ')" | sha256sum | cut -c1-16)"
    tarball="$CLEANROOT_CACHE/$CLEANROOT_SUITE-minbase-$key.tar.zst"
    if [ -s "$tarball" ] && [ "${CLEANROOT_REBUILD:-0}" != 1 ]; then
        touch "$tarball"   # in use: kept by the clean-up below
        cleanroot_log "cached root: $tarball"
        printf '%s\n' "$tarball"; return 0
    fi

    local tool
    for tool in debootstrap zstd unshare chroot; do
        command -v "$tool" >/dev/null 2>&1 || { cleanroot_log "missing '$tool' (run ./scripts/deps)"; return 1; }
    done
    install -d -m 0700 "$CLEANROOT_CACHE"
    local work
    work="$(mktemp -d "$CLEANROOT_CACHE/build.XXXXXX")" || return 1
    cleanroot_log "building a clean $CLEANROOT_SUITE root from $mirror (once; cached as $tarball)"
    # debootstrap mounts proc and sys inside the target: in a private mount namespace those
    # mounts vanish with it, even if it fails half-way.
    local include
    include="$(IFS=,; echo "${install[*]}")"
    if ! timeout 1800 unshare --mount --propagation private -- \
        debootstrap --variant=minbase --arch="$arch" ${include:+--include="$include"} \
        "$CLEANROOT_SUITE" "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1; then
        cleanroot_log "debootstrap failed; the end of its log:"
        tail -n 30 "$work/debootstrap.log" >&2
        rm -rf "$work"; return 1
    fi
    # The root's apt sees only the suite debootstrap used. Drop debootstrap's own .debs and
    # download what the package will depend on, so that installing it later needs no network.
    cp /etc/resolv.conf "$work/root/etc/resolv.conf" 2>/dev/null || true
    if [ ${#download[@]} -gt 0 ]; then
        if ! cleanroot_run "$work/root" 900 env DEBIAN_FRONTEND=noninteractive \
            sh -c 'apt-get clean && apt-get update -qq && apt-get install -y -qq --no-install-recommends --download-only "$@"' sh "${download[@]}" \
            >"$work/download.log" 2>&1; then
            cleanroot_log "downloading ${download[*]} into the root failed:"
            tail -n 30 "$work/download.log" >&2
            rm -rf "$work"; return 1
        fi
    fi
    rm -f "$work/root/etc/resolv.conf"
    if ! tar --numeric-owner --xattrs -C "$work/root" -cf - . | zstd -q -T0 -6 -o "$work/root.tar.zst"; then
        cleanroot_log "cannot write the tarball"; rm -rf "$work"; return 1
    fi
    mv "$work/root.tar.zst" "$tarball"
    rm -rf "$work"
    # Roots for package lists nobody has used for 30 days go (the lists change with the package).
    find "$CLEANROOT_CACHE" -maxdepth 1 -name "$CLEANROOT_SUITE-minbase-*.tar.zst" ! -path "$tarball" -mtime +30 -delete 2>/dev/null || true
    cleanroot_log "built $tarball ($(du -h "$tarball" | cut -f1))"
    printf '%s\n' "$tarball"
}

# cleanroot_unpack TARBALL DIR: DIR (created, root-only) holds a fresh copy of the root.
cleanroot_unpack() {
    local tarball=$1 dir=$2
    install -d -m 0755 "$dir"
    zstd -q -dc "$tarball" | tar --numeric-owner --xattrs -C "$dir" -xpf -
}

# cleanroot_run DIR SECONDS COMMAND...: COMMAND chrooted in DIR, in new mount and PID namespaces.
cleanroot_run() {
    local dir=$1 seconds=$2; shift 2
    [ -x "$dir/bin/sh" ] || { cleanroot_log "$dir is not a root"; return 125; }
    timeout -k 10 "$seconds" unshare --mount --pid --fork --kill-child --propagation private -- bash -c '
        set -e
        dir=$1; shift
        mount --make-rprivate /
        mount -t proc proc "$dir/proc"
        mount -t tmpfs -o mode=0755,size=1m,nosuid cleanroot-dev "$dir/dev"
        for n in null zero full random urandom tty; do
            touch "$dir/dev/$n"; mount --bind "/dev/$n" "$dir/dev/$n"
        done
        mkdir -p "$dir/dev/pts" "$dir/dev/shm"
        mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 cleanroot-devpts "$dir/dev/pts"
        ln -s pts/ptmx "$dir/dev/ptmx"
        ln -s /proc/self/fd "$dir/dev/fd"
        ln -s /proc/self/fd/0 "$dir/dev/stdin"; ln -s /proc/self/fd/1 "$dir/dev/stdout"; ln -s /proc/self/fd/2 "$dir/dev/stderr"
        mount -t tmpfs -o mode=1777,nosuid,nodev cleanroot-shm "$dir/dev/shm"
        mount -t tmpfs -o mode=0755,nosuid,nodev cleanroot-run "$dir/run"
        mount -t tmpfs -o mode=1777,nosuid,nodev cleanroot-tmp "$dir/tmp"
        set +e
        exec chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            HOME=/root LANG=C.UTF-8 TERM=xterm "$@"
    ' cleanroot "$dir" "$@"
}
