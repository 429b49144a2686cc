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
# For the real callers (Tests/EndToEnd/callers-*.sh) also:
#   sandbox_write_stack SERVICE [ARGS...]       # pam.d/SERVICE: the recommended stack (module, then
#                                               # pam_unix nullok try_first_pass, deny, permit)
#   SANDBOX_PRIVATE_RUN=1                       # a private tmpfs on /run and private login records
#   SANDBOX_PID_NS=1                            # also a PID namespace: every process a snippet
#                                               # started (sshd, dbus-daemon, polkitd) dies with it
#
# Inside a sandbox_run snippet these helpers are defined (the library is sourced there too):
#   bio ARGS...                the CLI with --db/--sensor simulated/--sim-socket of this sandbox
#   sandbox_as USER CMD...     CMD as USER (setpriv --reuid/--regid --clear-groups, clean env, cwd /,
#                              no controlling tty unless SANDBOX_AS_TTY=1, killed after 30 s)
#   sandbox_touch ID...        one simulated touch per ID, in order (each waits for the sensor)
#   sandbox_touch_bg ID...     the same from a background finger process; sandbox_touch_end collects it
#   sandbox_enrol USER ID [F]  enrol finger F (default right-index) of USER with 5 touches of ID
#   sandbox_root CMD...        CMD as root with a clean environment (no SSH_* of whoever runs
#                              the tests), cwd /
#   sandbox_sshd_start MODE [LINES]   the real sshd on 127.0.0.1, a free port (SANDBOX_SSHD_PORT);
#                              MODE password or kbdint; SANDBOX_SSH_OPTS: the client's options
#   sandbox_sshd_stop
#   sandbox_polkit_start       a private system bus on /run/dbus/system_bus_socket and the real
#                              polkitd on it (needs SANDBOX_PRIVATE_RUN=1); sandbox_polkit_stop
#
# Variables (exported by sandbox_create; override BUILD_DIR / SANDBOX_TIMEOUT before it):
#   SANDBOX_DIR    root-only temp dir holding everything (short, under /tmp)
#   SANDBOX_DB     the store (its directory is created by the CLI, 0700)
#   SANDBOX_SOCK   the simulated sensor's control socket (directory root-owned, 0700)
#   SANDBOX_BUILD  absolute build dir (BUILD_DIR, default: the repo's build/)
#   SANDBOX_TIMEOUT  the module's timeout= in seconds (default 15)
#   SANDBOX_LANG   the locale of sandbox_as and sandbox_root (LANG and LC_ALL; default C: every
#                  message in English), e.g. zh_CN.UTF-8 for a test in another language

SANDBOX_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
export SANDBOX_LIB

# The files the sandbox replaces; sandbox_etc_fingerprint covers these and SANDBOX_WATCHED.
SANDBOX_PROTECTED=(/etc/passwd /etc/group /etc/shadow /etc/sudoers /etc/pam.d)
# What the callers' helpers (sshd, login, vlock, polkitd) could touch on the host, and must not:
# they read these (or, with SANDBOX_PRIVATE_RUN=1, write private copies of them).
SANDBOX_WATCHED=(/etc/ssh /etc/polkit-1 /etc/security /etc/login.defs /etc/shells
                 /usr/share/polkit-1 /var/log/wtmp /var/log/btmp /var/log/lastlog /var/log/faillog)

sandbox_die() { echo "sandbox: $*" >&2; return 1; }

# Prints a fingerprint (content hash, mode, owner) of the host files the sandbox replaces.
# Compare the output before and after a run to prove the host's /etc was left alone.
sandbox_etc_fingerprint() {
    local f
    for f in "${SANDBOX_PROTECTED[@]}" "${SANDBOX_WATCHED[@]}"; do
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

# sandbox_lock_account NAME: NAME's password in the shadow copy becomes "*" (no password opens
# it, not even an empty one under nullok): for callers that fall back to another account (vlock
# asks for root's password after the user's fails).
sandbox_lock_account() {
    awk -F: -v OFS=: -v n="$1" '$1 == n { $2 = "*" } { print }' "$SANDBOX_DIR/etc/shadow" >"$SANDBOX_DIR/etc/shadow.new" || return 1
    cat "$SANDBOX_DIR/etc/shadow.new" >"$SANDBOX_DIR/etc/shadow"   # keeps the copy's owner and mode
    rm -f "$SANDBOX_DIR/etc/shadow.new"
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
    # As in sandbox_module_args: no host process makes a transaction remote.
    [ "${SANDBOX_PID_NS:-0}" = 1 ] || args="$args proc_path=$SANDBOX_DIR/proc"
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

# The issue-12 contract's control line: every outcome but success and a failure moves on to
# the password module.
SANDBOX_CONTROL='[success=done ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die]'

# sandbox_module_args [ARGS...]: the module arguments that point at this sandbox -- its store and
# simulated sensor, and a config file, lid and logind directories of its own (absent or empty),
# so that nothing of the host's state leaks in -- then ARGS.
# Processes (proc_path) are read from the sandbox's own /proc when it has a PID namespace, whose
# init ends every ancestry (an sshd started in the sandbox counts, the host's do not); without
# one, from an empty directory, so that the host's own process tree (a CI runner started over
# SSH) never makes a transaction remote.
sandbox_module_args() {
    local procs=""
    [ "${SANDBOX_PID_NS:-0}" = 1 ] || procs="proc_path=$SANDBOX_DIR/proc"
    echo "db=$SANDBOX_DB sensor=simulated sim_socket=$SANDBOX_SOCK config=$SANDBOX_DIR/etc/biounlock.conf lid_path=$SANDBOX_DIR/lid logind_path=$SANDBOX_DIR/sessions $procs $*"
}

# sandbox_write_stack SERVICE [ARGS...]: writes pam.d/SERVICE with the recommended stack
# (the issue-12 contract), the module getting sandbox_module_args ARGS:
#   auth CONTROL                    pam_biounlock.so ...
#   auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
#   auth requisite                  pam_deny.so
#   auth required                   pam_permit.so
# then account pam_unix, password pam_deny, session pam_permit. SANDBOX_STACK_FIRST (lines) goes
# first (su: "auth sufficient pam_rootok.so"). SANDBOX_STACK_ACCOUNT=1 adds the pam-auth-update
# profile's account line (account optional pam_biounlock.so, with the same ARGS) after
# pam_unix's: the witness of a password for callers that never call pam_setcred (polkit's
# helper). pam.d is bind-mounted as a directory, so a stack
# rewritten between two transactions applies to the next one, even inside a running namespace.
sandbox_write_stack() {
    local service=$1; shift
    [ -d "$SANDBOX_DIR/etc/pam.d" ] || { sandbox_die "sandbox_write_config first"; return 1; }
    mkdir -p -m 0700 "$SANDBOX_DIR/lid" "$SANDBOX_DIR/sessions"
    {
        echo "#%PAM-1.0"
        echo "# biounlock sandbox: the recommended stack (callers end-to-end tests)"
        if [ -n "${SANDBOX_STACK_FIRST:-}" ]; then printf '%s\n' "$SANDBOX_STACK_FIRST"; fi
        echo "auth     $SANDBOX_CONTROL $SANDBOX_BUILD/pam_biounlock.so $(sandbox_module_args "$@")"
        echo "auth     [success=1 default=ignore] pam_unix.so nullok try_first_pass"
        echo "auth     requisite pam_deny.so"
        echo "auth     required pam_permit.so"
        echo "account  required pam_unix.so"
        if [ "${SANDBOX_STACK_ACCOUNT:-0}" = 1 ]; then
            echo "account  optional $SANDBOX_BUILD/pam_biounlock.so $(sandbox_module_args "$@")"
        fi
        echo "password required pam_deny.so"
        echo "session  required pam_permit.so"
    } >"$SANDBOX_DIR/etc/pam.d/$service.new" || return 1
    chmod 0644 "$SANDBOX_DIR/etc/pam.d/$service.new"
    mv -f "$SANDBOX_DIR/etc/pam.d/$service.new" "$SANDBOX_DIR/etc/pam.d/$service"
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
    if [ "${SANDBOX_PRIVATE_RUN:-0}" = 1 ]; then _sandbox_private_run || return 1; fi
    mkdir -p /run/sudo 2>/dev/null
    mount -t tmpfs -o mode=0711,size=1m sandbox-sudo /run/sudo || { sandbox_die "cannot mount tmpfs on /run/sudo"; return 1; }
    grep -q '^# biounlock sandbox sudoers' /etc/sudoers \
        || { sandbox_die "the sandbox's sudoers is not in place; refusing to go on"; return 1; }
    for f in ${SANDBOX_USERS:-}; do
        getent passwd "$f" >/dev/null || { sandbox_die "user $f not visible inside the sandbox"; return 1; }
    done
}

# With SANDBOX_PRIVATE_RUN=1: an empty tmpfs on /run (sshd's /run/sshd, utmp, a private
# /run/dbus for polkit, /run/tmp for temporary files) and private copies of the login records (/var/log/wtmp, btmp, lastlog,
# faillog), so that sshd, login and su record their sessions inside the sandbox only.
_sandbox_private_run() {
    local f copy
    mount -t tmpfs -o mode=0755,size=16m sandbox-run /run || { sandbox_die "cannot mount tmpfs on /run"; return 1; }
    mkdir -m 0755 /run/sshd /run/dbus /run/user /run/log
    mkdir -m 1777 /run/lock /run/tmp   # /run/tmp: temporary files of the test users, gone with the namespace
    install -m 0664 -o root -g utmp /dev/null /run/utmp 2>/dev/null || : >/run/utmp
    mkdir -p -m 0700 "$SANDBOX_DIR/var"
    for f in /var/log/wtmp /var/log/btmp /var/log/lastlog /var/log/faillog; do
        [ -f "$f" ] || continue
        copy="$SANDBOX_DIR/var/${f##*/}"
        [ -f "$copy" ] || { : >"$copy" && chown --reference="$f" "$copy" && chmod --reference="$f" "$copy"; } || return 1
        mount --bind "$copy" "$f" || { sandbox_die "cannot bind $f"; return 1; }
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
    local -a ns=(--mount --propagation private)
    [ "${SANDBOX_PID_NS:-0}" = 1 ] && ns+=(--pid --fork --mount-proc)
    unshare "${ns[@]}" -- bash -c '
        source "$SANDBOX_LIB" || exit 125
        _sandbox_enter || exit 125
        file=$1; shift
        source "$file"
    ' sandbox "$file" "$@"
}

# Removes the sandbox directory (the mounts died with their namespace). SANDBOX_KEEP=1 keeps it
# (transcripts, store, logs) and says where.
sandbox_destroy() {
    if [ "${SANDBOX_KEEP:-0}" = 1 ] && [ -n "${SANDBOX_DIR:-}" ]; then echo "# kept: $SANDBOX_DIR" >&2; return 0; fi
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
        env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ USER="$user" LOGNAME="$user" LANG="${SANDBOX_LANG:-C}" LC_ALL="${SANDBOX_LANG:-C}" \
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

# sandbox_root CMD...: CMD as root with a clean environment and cwd /, killed after
# SANDBOX_CMD_TIMEOUT seconds (default 30). The environment of whoever runs the tests (an
# SSH_CONNECTION above all) must not reach the module.
# With SANDBOX_AS_TTY=1 it stays in the caller's foreground process group (on the terminal).
sandbox_root() {
    local -a wrap=(timeout -k 5 "${SANDBOX_CMD_TIMEOUT:-30}")
    [ "${SANDBOX_AS_TTY:-0}" = 1 ] && wrap=(timeout --foreground -k 5 "${SANDBOX_CMD_TIMEOUT:-30}")
    (cd / && exec "${wrap[@]}" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root USER=root LOGNAME=root TERM="${TERM:-xterm}" LANG="${SANDBOX_LANG:-C}" LC_ALL="${SANDBOX_LANG:-C}" "$@")
}

# ---- sshd (inside the namespace; needs SANDBOX_PRIVATE_RUN=1 for /run/sshd) ----

# sandbox_sshd_start MODE [CONFIG-LINES]: starts the real /usr/sbin/sshd in the foreground of
# this namespace, listening on 127.0.0.1 only, on a port the kernel said was free, with the
# sandbox's own host key and config (UsePAM yes: /etc/pam.d/sshd is the sandbox's). MODE is
# `password` (PasswordAuthentication yes, keyboard-interactive no) or `kbdint` (the reverse).
# Waits until sshd says it listens. Sets SANDBOX_SSHD_PORT, SANDBOX_SSHD_PID and
# SANDBOX_SSH_OPTS (the client's options: no config, keys, agent or known_hosts file).
# The log is $SANDBOX_DIR/ssh/sshd.log.
sandbox_sshd_start() {
    local mode=$1 extra=${2:-} dir="$SANDBOX_DIR/ssh" pw kbd port try i
    [ -n "${SANDBOX_DIR:-}" ] || { sandbox_die "sandbox_sshd_start: no sandbox"; return 1; }
    case "$mode" in
        password) pw=yes kbd=no ;;
        kbdint) pw=no kbd=yes ;;
        *) sandbox_die "sandbox_sshd_start: mode password or kbdint"; return 1 ;;
    esac
    [ -d /run/sshd ] || { sandbox_die "no /run/sshd: set SANDBOX_PRIVATE_RUN=1"; return 1; }
    mkdir -p -m 0700 "$dir"
    [ -f "$dir/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C biounlock-sandbox -f "$dir/host_ed25519" \
        || { sandbox_die "ssh-keygen failed"; return 1; }
    for try in 1 2 3; do
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') || return 1
        {
            echo "# biounlock sandbox sshd ($mode)"
            echo "Port $port"
            echo "ListenAddress 127.0.0.1"
            echo "HostKey $dir/host_ed25519"
            echo "PidFile $dir/sshd.pid"
            echo "UsePAM yes"
            echo "PasswordAuthentication $pw"
            echo "KbdInteractiveAuthentication $kbd"
            echo "PubkeyAuthentication no"
            echo "HostbasedAuthentication no"
            echo "PermitRootLogin no"
            echo "PermitEmptyPasswords no"
            echo "AuthorizedKeysFile none"
            echo "AllowUsers${SANDBOX_USERS:-}"
            echo "UseDNS no"
            echo "PrintMotd no"
            echo "PrintLastLog no"
            echo "StrictModes no"
            echo "MaxAuthTries 6"
            echo "LoginGraceTime 60"
            echo "MaxStartups 30:30:60"
            echo "X11Forwarding no"
            echo "AllowTcpForwarding no"
            echo "AllowAgentForwarding no"
            echo "LogLevel VERBOSE"
            [ -n "$extra" ] && printf '%s\n' "$extra"
        } >"$dir/sshd_config"
        : >"$dir/sshd.log"
        /usr/sbin/sshd -D -f "$dir/sshd_config" -E "$dir/sshd.log" </dev/null &
        SANDBOX_SSHD_PID=$!
        for ((i = 0; i < 200; i++)); do
            if grep -q "Server listening on 127.0.0.1 port $port" "$dir/sshd.log"; then
                SANDBOX_SSHD_PORT=$port
                SANDBOX_SSH_OPTS=(-F /dev/null -p "$port" -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null
                    -o StrictHostKeyChecking=no -o PubkeyAuthentication=no -o IdentitiesOnly=yes -o IdentityAgent=none
                    -o ConnectTimeout=20 -o LogLevel=ERROR -o NumberOfPasswordPrompts=1)
                return 0
            fi
            kill -0 "$SANDBOX_SSHD_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill "$SANDBOX_SSHD_PID" 2>/dev/null
        wait "$SANDBOX_SSHD_PID" 2>/dev/null
        # Only a port taken between the check and sshd's bind is worth another try.
        grep -q "Address already in use" "$dir/sshd.log" || break
    done
    sandbox_die "sshd did not start: $(tail -n 5 "$dir/sshd.log")"
    return 1
}

sandbox_sshd_stop() {
    [ -n "${SANDBOX_SSHD_PID:-}" ] || return 0
    kill "$SANDBOX_SSHD_PID" 2>/dev/null
    wait "$SANDBOX_SSHD_PID" 2>/dev/null
    SANDBOX_SSHD_PID=
}

# ---- polkit (inside the namespace; needs SANDBOX_PRIVATE_RUN=1) ----

# sandbox_polkit_start: a private dbus-daemon as the system bus, listening on
# /run/dbus/system_bus_socket of this namespace's private /run (where setuid programs such as
# pkexec and polkit-agent-helper-1 look, whatever their environment says), and the real polkitd
# on it. The sandbox's own action (org.biounlock.sandbox.test, auth_self) and rules
# (SANDBOX_POLKIT_RULES: the text of 90-sandbox.rules, optional) are bind-mounted over
# /usr/share/polkit-1/actions and /etc/polkit-1/rules.d inside the namespace only.
# Sets SANDBOX_DBUS_PID and SANDBOX_POLKITD_PID; logs in $SANDBOX_DIR/polkit/.
sandbox_polkit_start() {
    local dir="$SANDBOX_DIR/polkit" i
    [ -n "${SANDBOX_DIR:-}" ] || { sandbox_die "sandbox_polkit_start: no sandbox"; return 1; }
    grep -q ' /run tmpfs ' /proc/self/mounts && grep -q '^sandbox-run /run ' /proc/self/mounts \
        || { sandbox_die "no private /run: set SANDBOX_PRIVATE_RUN=1"; return 1; }
    mkdir -p -m 0755 "$dir" "$dir/actions" "$dir/rules.d"
    cp -p /usr/share/polkit-1/actions/*.policy "$dir/actions/" 2>/dev/null
    {
        echo '<?xml version="1.0" encoding="UTF-8"?>'
        echo '<!DOCTYPE policyconfig PUBLIC "-//freedesktop//DTD PolicyKit Policy Configuration 1.0//EN"'
        echo ' "http://www.freedesktop.org/standards/PolicyKit/1/policyconfig.dtd">'
        echo '<policyconfig>'
        echo '  <action id="org.biounlock.sandbox.test">'
        echo '    <description>biounlock sandbox test action</description>'
        echo '    <message>Authentication is required to run the biounlock sandbox test</message>'
        echo '    <defaults>'
        echo '      <allow_any>auth_self</allow_any>'
        echo '      <allow_inactive>auth_self</allow_inactive>'
        echo '      <allow_active>auth_self</allow_active>'
        echo '    </defaults>'
        echo '  </action>'
        echo '</policyconfig>'
    } >"$dir/actions/org.biounlock.sandbox.policy"
    printf '%s\n' "${SANDBOX_POLKIT_RULES:-// biounlock sandbox: no rules}" >"$dir/rules.d/90-sandbox.rules"
    chmod 0644 "$dir/actions/"* "$dir/rules.d/"*
    mount --bind "$dir/actions" /usr/share/polkit-1/actions || { sandbox_die "cannot bind the polkit actions"; return 1; }
    mount --bind "$dir/rules.d" /etc/polkit-1/rules.d || { sandbox_die "cannot bind the polkit rules"; return 1; }
    {
        echo '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"'
        echo ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">'
        echo '<busconfig>'
        echo '  <type>system</type>'
        echo '  <listen>unix:path=/run/dbus/system_bus_socket</listen>'
        echo '  <auth>EXTERNAL</auth>'
        echo '  <policy context="default">'
        echo '    <allow user="*"/>'
        echo '    <allow own="*"/>'
        echo '    <allow send_destination="*" eavesdrop="true"/>'
        echo '    <allow eavesdrop="true"/>'
        echo '  </policy>'
        echo '</busconfig>'
    } >"$dir/system-bus.conf"
    dbus-daemon --config-file="$dir/system-bus.conf" --nofork --nopidfile --nosyslog >"$dir/dbus.log" 2>&1 &
    SANDBOX_DBUS_PID=$!
    for ((i = 0; i < 200; i++)); do
        [ -S /run/dbus/system_bus_socket ] && break
        kill -0 "$SANDBOX_DBUS_PID" 2>/dev/null || { sandbox_die "dbus-daemon ended: $(cat "$dir/dbus.log")"; return 1; }
        sleep 0.05
    done
    [ -S /run/dbus/system_bus_socket ] || { sandbox_die "no system bus socket"; return 1; }
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin /usr/lib/polkit-1/polkitd --no-debug >"$dir/polkitd.log" 2>&1 &
    SANDBOX_POLKITD_PID=$!
    for ((i = 0; i < 200; i++)); do
        if env -i DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/dbus/system_bus_socket \
            dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
            string:org.freedesktop.PolicyKit1 2>/dev/null | grep -q 'boolean true'; then
            return 0
        fi
        kill -0 "$SANDBOX_POLKITD_PID" 2>/dev/null || break
        sleep 0.05
    done
    sandbox_die "polkitd did not take its name on the bus: $(tail -n 5 "$dir/polkitd.log")"
    return 1
}

sandbox_polkit_stop() {
    local p
    for p in "${SANDBOX_POLKITD_PID:-}" "${SANDBOX_DBUS_PID:-}"; do
        [ -n "$p" ] || continue
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    SANDBOX_POLKITD_PID= SANDBOX_DBUS_PID=
}

# Run as a program (by expect, which cannot call shell functions), inside a snippet:
#   bash "$SANDBOX_LIB" as USER CMD...      sandbox_as on the caller's terminal (SANDBOX_AS_TTY=1)
#   bash "$SANDBOX_LIB" root CMD...         sandbox_root on the caller's terminal
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
        as) shift; SANDBOX_AS_TTY=1 sandbox_as "$@"; exit $? ;;
        root) shift; SANDBOX_AS_TTY=1 sandbox_root "$@"; exit $? ;;
        *) echo "usage: bash sandbox.sh as USER CMD... | root CMD..." >&2; exit 64 ;;
    esac
fi
