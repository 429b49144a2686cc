# shellcheck shell=bash
# scripts/lib/sandbox.sh: run the REAL /usr/bin/sudo against build/pam_biounlock.so without
# touching the host's /etc.
#
# How: sandbox_create writes private copies of /etc/passwd, /etc/group, /etc/shadow, a
# sudoers file and a pam.d directory into a root-only temp dir. sandbox_run starts ONE
# `unshare --mount --propagation private` process tree, bind-mounts those copies over the
# real paths (plus a tmpfs on /run/sudo for timestamps) and runs a bash scenario inside it.
# The mounts exist only inside that process tree and vanish with it; the host's files are
# never opened for writing. Test users exist only in the copies.
#
# Usage (as root, bash):
#   source scripts/lib/sandbox.sh
#   sandbox_create                              # sets and exports the SANDBOX_* variables below
#   sandbox_add_user bioalice 4242 'unix-password'
#   sandbox_write_config                        # sudoers + pam.d (module args: SANDBOX_MODULE_ARGS)
#   sandbox_run 'bio status bioalice'           # runs the snippet inside the namespace
#   sandbox_destroy                             # removes the temp dir (call it from an EXIT trap)
#
# Inside a sandbox_run snippet these helpers are defined (the library is sourced there too):
#   bio ARGS...                the CLI with --db/--sensor simulated/--sim-socket of this sandbox
#   sandbox_as USER CMD...     CMD as USER (setpriv --reuid/--regid --clear-groups, clean env, cwd /,
#                              no controlling tty unless SANDBOX_AS_TTY=1, killed after 30 s)
#   sandbox_touch ID...        one simulated touch per ID, in order (each waits for the sensor)
#   sandbox_touch_bg ID...     the same from a background finger process; sandbox_touch_end collects it
#   sandbox_enrol USER ID [F]  enrol finger F (default right-index) of USER with 5 touches of ID
#
# Variables (exported by sandbox_create; override BUILD_DIR / SANDBOX_TIMEOUT before it):
#   SANDBOX_DIR    root-only temp dir holding everything (short, under /tmp)
#   SANDBOX_DB     the store (its directory is created by the CLI, 0700)
#   SANDBOX_SOCK   the simulated sensor's control socket (directory root-owned, 0700)
#   SANDBOX_BUILD  absolute build dir (BUILD_DIR, default: the repo's build/)
#   SANDBOX_TIMEOUT  the module's timeout= in seconds (default 15)

SANDBOX_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
export SANDBOX_LIB

# The files the sandbox replaces; sandbox_etc_fingerprint covers exactly these.
SANDBOX_PROTECTED=(/etc/passwd /etc/group /etc/shadow /etc/sudoers /etc/pam.d)

sandbox_die() { echo "sandbox: $*" >&2; return 1; }

# Prints a fingerprint (content hash, mode, owner) of the host files the sandbox replaces.
# Compare the output before and after a run to prove the host's /etc was left alone.
sandbox_etc_fingerprint() {
    local f
    for f in "${SANDBOX_PROTECTED[@]}"; do
        if [ -d "$f" ]; then
            find "$f" -print0 | LC_ALL=C sort -z | while IFS= read -r -d '' g; do
                if [ -f "$g" ] && [ ! -L "$g" ]; then
                    printf '%s %s\n' "$(stat -c '%n %a %U:%G %F' "$g")" "$(sha256sum <"$g" | cut -d' ' -f1)"
                else
                    stat -c '%n %a %U:%G %F %N' "$g"
                fi
            done
        elif [ -e "$f" ]; then
            printf '%s %s\n' "$(stat -c '%n %a %U:%G %F' "$f")" "$(sha256sum <"$f" | cut -d' ' -f1)"
        else
            echo "$f missing"
        fi
    done
}

# Checks what the sandbox needs; prints the first problem.
sandbox_check_host() {
    [ "$(id -u)" -eq 0 ] || { sandbox_die "must run as root (unshare and bind mounts)"; return 1; }
    local tool
    for tool in unshare setpriv mount openssl timeout setsid python3; do
        command -v "$tool" >/dev/null 2>&1 || { sandbox_die "missing tool '$tool' (run ./scripts/deps)"; return 1; }
    done
    [ -u /usr/bin/sudo ] || { sandbox_die "/usr/bin/sudo is missing or not setuid (run ./scripts/deps)"; return 1; }
    [ -x "$SANDBOX_BUILD/biounlock" ] && [ -f "$SANDBOX_BUILD/pam_biounlock.so" ] \
        || { sandbox_die "no build in $SANDBOX_BUILD (run ./scripts/build)"; return 1; }
}

# Creates the sandbox directory and the private copies of the host files.
sandbox_create() {
    local repo
    repo="$(cd "$(dirname "$SANDBOX_LIB")/../.." && pwd)"
    SANDBOX_BUILD="$(cd "${BUILD_DIR:-$repo/build}" 2>/dev/null && pwd)" \
        || { sandbox_die "BUILD_DIR ${BUILD_DIR:-$repo/build} does not exist (run ./scripts/build)"; return 1; }
    SANDBOX_TIMEOUT="${SANDBOX_TIMEOUT:-15}"
    sandbox_check_host || return 1

    SANDBOX_DIR="$(mktemp -d /tmp/bsb.XXXXXX)" || return 1
    chmod 0700 "$SANDBOX_DIR"
    chown 0:0 "$SANDBOX_DIR"
    mkdir -m 0700 "$SANDBOX_DIR/etc" "$SANDBOX_DIR/sim" "$SANDBOX_DIR/run"
    mkdir -m 0755 "$SANDBOX_DIR/etc/pam.d"
    SANDBOX_DB="$SANDBOX_DIR/store/biounlock.db"
    SANDBOX_SOCK="$SANDBOX_DIR/sim/s"
    export SANDBOX_DIR SANDBOX_DB SANDBOX_SOCK SANDBOX_BUILD SANDBOX_TIMEOUT

    # Copies keep the host's owner and mode (shadow stays root:shadow 0640).
    cp -p /etc/passwd "$SANDBOX_DIR/etc/passwd"
    cp -p /etc/group "$SANDBOX_DIR/etc/group"
    cp -p /etc/shadow "$SANDBOX_DIR/etc/shadow"
}

# sandbox_add_user NAME UID UNIX-PASSWORD: a user (and its own group, gid = uid) in the copies only.
sandbox_add_user() {
    local name=$1 uid=$2 password=$3 hash days
    [ -n "${SANDBOX_DIR:-}" ] || { sandbox_die "sandbox_create first"; return 1; }
    # The host may already have a user or group of that name or id: the copies drop it, so
    # inside the sandbox NAME is exactly the user defined here (the host keeps its own).
    local f
    for f in passwd group shadow; do
        awk -F: -v n="$name" -v id="$uid" -v f="$f" \
            '!($1 == n || (f != "shadow" && $3 == id))' "$SANDBOX_DIR/etc/$f" >"$SANDBOX_DIR/etc/$f.new" || return 1
        cat "$SANDBOX_DIR/etc/$f.new" >"$SANDBOX_DIR/etc/$f"   # keeps the copy's owner and mode
        rm -f "$SANDBOX_DIR/etc/$f.new"
    done
    hash="$(printf '%s' "$password" | openssl passwd -6 -stdin)" || return 1
    days=$(( $(date +%s) / 86400 - 1 ))   # last change yesterday: no "password expired" from pam_unix
    printf '%s:x:%s:%s:biounlock test user:/nonexistent:/bin/sh\n' "$name" "$uid" "$uid" >>"$SANDBOX_DIR/etc/passwd"
    printf '%s:x:%s:\n' "$name" "$uid" >>"$SANDBOX_DIR/etc/group"
    printf '%s:%s:%s:0:99999:7:::\n' "$name" "$hash" "$days" >>"$SANDBOX_DIR/etc/shadow"
    SANDBOX_USERS="${SANDBOX_USERS:-} $name"
    export SANDBOX_USERS
}

# Writes the sudoers file and the pam.d directory. Every user added so far may run anything
# with sudo. Module arguments after the defaults come from SANDBOX_MODULE_ARGS.
sandbox_write_config() {
    local u module="$SANDBOX_BUILD/pam_biounlock.so"
    {
        echo "# biounlock sandbox sudoers (bind-mounted over /etc/sudoers inside the namespace only)"
        echo "Defaults env_reset"
        echo "Defaults secure_path=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\""
        echo "Defaults !lecture"
        echo "Defaults timestamp_timeout=0"
        echo "Defaults passwd_tries=1"
        echo "Defaults !fqdn"
        echo "Defaults !mail_badpass"
        echo "Defaults !use_pty"
        echo "root ALL=(ALL:ALL) ALL"
        for u in ${SANDBOX_USERS:-}; do echo "$u ALL=(ALL:ALL) ALL"; done
    } >"$SANDBOX_DIR/etc/sudoers"
    chown 0:0 "$SANDBOX_DIR/etc/sudoers"
    chmod 0440 "$SANDBOX_DIR/etc/sudoers"

    local args="db=$SANDBOX_DB sensor=simulated sim_socket=$SANDBOX_SOCK timeout=$SANDBOX_TIMEOUT ${SANDBOX_MODULE_ARGS:-}"
    # The recommended stack (README): biounlock, then pam_unix with try_first_pass, which takes
    # text typed at biounlock's prompt that was not the PIN as the Unix password.
    cat >"$SANDBOX_DIR/etc/pam.d/sudo" <<EOF
#%PAM-1.0
# biounlock sandbox: touch the reader, or type the biounlock PIN or the Unix password.
auth    [success=done ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die] $module $args
auth    [success=1 default=ignore] pam_unix.so nullok try_first_pass
auth    requisite   pam_deny.so
auth    required    pam_permit.so
account required    pam_unix.so
session required    pam_permit.so
EOF
    cp "$SANDBOX_DIR/etc/pam.d/sudo" "$SANDBOX_DIR/etc/pam.d/sudo-i"
    cat >"$SANDBOX_DIR/etc/pam.d/other" <<'EOF'
#%PAM-1.0
# Anything else inside the sandbox is refused.
auth     required pam_deny.so
account  required pam_deny.so
password required pam_deny.so
session  required pam_deny.so
EOF
    chown -R 0:0 "$SANDBOX_DIR/etc/pam.d"
    chmod 0644 "$SANDBOX_DIR/etc/pam.d/"*
}

# Inside the namespace: put the copies in place, then prove they are in place.
_sandbox_enter() {
    local f
    # Nothing mounted here may propagate back to the host, whatever the host's defaults.
    mount --make-rprivate / || { sandbox_die "cannot make / private"; return 1; }
    for f in passwd group shadow sudoers; do
        mount --bind "$SANDBOX_DIR/etc/$f" "/etc/$f" || { sandbox_die "cannot bind /etc/$f"; return 1; }
    done
    mount --bind "$SANDBOX_DIR/etc/pam.d" /etc/pam.d || { sandbox_die "cannot bind /etc/pam.d"; return 1; }
    mkdir -p /run/sudo 2>/dev/null
    mount -t tmpfs -o mode=0711,size=1m sandbox-sudo /run/sudo || { sandbox_die "cannot mount tmpfs on /run/sudo"; return 1; }
    grep -q '^# biounlock sandbox sudoers' /etc/sudoers \
        || { sandbox_die "the sandbox's sudoers is not in place; refusing to go on"; return 1; }
    for f in ${SANDBOX_USERS:-}; do
        getent passwd "$f" >/dev/null || { sandbox_die "user $f not visible inside the sandbox"; return 1; }
    done
}

# sandbox_run SNIPPET [ARGS...]: runs the bash SNIPPET (with ARGS as $1...) in a fresh private
# mount namespace with the sandbox's files mounted. Returns the snippet's exit status
# (125 when the sandbox could not be set up).
sandbox_run() {
    local snippet=$1; shift
    [ -n "${SANDBOX_DIR:-}" ] && [ -f "$SANDBOX_DIR/etc/sudoers" ] || { sandbox_die "sandbox_create and sandbox_write_config first"; return 125; }
    local file
    file="$(mktemp "$SANDBOX_DIR/run/snippet.XXXXXX")" || return 125
    printf '%s\n' "$snippet" >"$file"
    unshare --mount --propagation private -- bash -c '
        source "$SANDBOX_LIB" || exit 125
        _sandbox_enter || exit 125
        file=$1; shift
        source "$file"
    ' sandbox "$file" "$@"
}

# Removes the sandbox directory (the mounts died with their namespace).
sandbox_destroy() {
    if [ -n "${SANDBOX_DIR:-}" ] && [ -d "$SANDBOX_DIR" ]; then
        case "$SANDBOX_DIR" in /tmp/bsb.*) rm -rf -- "$SANDBOX_DIR" ;; esac
    fi
}

# ---- helpers for snippets (inside the namespace) ----

bio() {
    "$SANDBOX_BUILD/biounlock" --db "$SANDBOX_DB" --sensor simulated --sim-socket "$SANDBOX_SOCK" "$@"
}

# sandbox_as USER CMD...: CMD as USER, with no supplementary groups, a clean environment and
# cwd /, killed after SANDBOX_CMD_TIMEOUT seconds (default 30).
# By default CMD runs in a new session without a controlling terminal, so sudo writes every
# message to stdout/stderr, where the caller captures it. With SANDBOX_AS_TTY=1 it keeps the
# caller's terminal instead (for a pty made by expect or script: sudo then talks to /dev/tty).
sandbox_as() {
    local user=$1; shift
    local uid gid
    uid="$(id -u "$user")" && gid="$(id -g "$user")" || { sandbox_die "no user $user"; return 1; }
    local -a wrap
    if [ "${SANDBOX_AS_TTY:-0}" = 1 ]; then
        wrap=(timeout --foreground -k 5 "${SANDBOX_CMD_TIMEOUT:-30}")
    else
        wrap=(setsid -w timeout -k 5 "${SANDBOX_CMD_TIMEOUT:-30}")
    fi
    (cd / && exec "${wrap[@]}" setpriv --reuid="$uid" --regid="$gid" --clear-groups \
        env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ USER="$user" LOGNAME="$user" LANG=C LC_ALL=C \
        "$@")
}

# sandbox_touch ID...: one touch per ID, each after the sensor took the previous one.
sandbox_touch() {
    local id
    for id in "$@"; do
        "$SANDBOX_BUILD/biounlock" --sim-socket "$SANDBOX_SOCK" sim scan "$id" --wait "${SANDBOX_TOUCH_WAIT:-20}" || return 1
    done
}

# sandbox_touch_bg ID...: the same touches from a background "finger" process (bounded by
# timeout), after SANDBOX_TOUCH_DELAY seconds (default 0); sets SANDBOX_TOUCH_PID. Its output
# goes to $SANDBOX_TOUCH_LOG (default /dev/null).
sandbox_touch_bg() {
    timeout -k 2 25 bash -c 'sleep "${SANDBOX_TOUCH_DELAY:-0}"; source "$SANDBOX_LIB" && sandbox_touch "$@"' finger "$@" \
        >"${SANDBOX_TOUCH_LOG:-/dev/null}" 2>&1 &
    SANDBOX_TOUCH_PID=$!
}

# sandbox_touch_end [GRACE]: waits up to GRACE seconds (default 3) for the background finger,
# then stops it; returns 0 only if every touch was taken by the sensor.
sandbox_touch_end() {
    local grace=${1:-3} i=0
    [ -n "${SANDBOX_TOUCH_PID:-}" ] || return 0
    while kill -0 "$SANDBOX_TOUCH_PID" 2>/dev/null && [ "$i" -lt $((grace * 10)) ]; do
        sleep 0.1; i=$((i + 1))
    done
    if kill -0 "$SANDBOX_TOUCH_PID" 2>/dev/null; then
        kill -TERM "$SANDBOX_TOUCH_PID" 2>/dev/null   # timeout passes it on to the touches
    fi
    wait "$SANDBOX_TOUCH_PID"
    local rc=$?
    SANDBOX_TOUCH_PID=
    return "$rc"
}

# sandbox_enrol USER ID [FINGER]: enrols with 5 touches of ID; prints the CLI's output.
sandbox_enrol() {
    local user=$1 id=$2 finger=${3:-right-index} pid rc
    bio enrol "$user" --finger "$finger" --timeout 30 &
    pid=$!
    sandbox_touch "$id" "$id" "$id" "$id" "$id" || { kill "$pid" 2>/dev/null; wait "$pid"; return 1; }
    wait "$pid"; rc=$?
    return "$rc"
}
