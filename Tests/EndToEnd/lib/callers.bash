# shellcheck shell=bash
# Shared by Tests/EndToEnd/callers-*.sh (issue 12: the real callers, end to end).
#
# Every caller runs inside the sandbox (scripts/lib/sandbox.sh) with a private /run, private login
# records and its own PID namespace, so sshd, dbus-daemon, polkitd and every session die with the
# snippet that started them and nothing on the host changes. Every stack is the recommended one
# (sandbox_write_stack: the module, then pam_unix nullok try_first_pass).
#
# Host side:
#   callers_setup                   sandbox, out dir, SANDBOX_PRIVATE_RUN=1 SANDBOX_PID_NS=1
#   callers_enrol USER FINGER-ID PIN   enrol a finger, set a PIN, enable biometric unlock
#   in_sandbox SNIPPET [ARGS...]    sandbox_run with this file sourced (talk, snap inside)
#   converse NAME [-pipe] STEP... -- CMD...   one conversation in a fresh namespace (talk)
#   store NAME                      snapshot of the store: out/NAME.status.json, out/NAME.events.json
# Inside (in_sandbox):
#   talk NAME [-pipe] STEP... -- CMD...   converse.exp; leaves out/NAME.txt (\r dropped), NAME.rc
#   snap NAME                       the same snapshot as `store`
#   "${AS[@]}" USER CMD..., "${ROOT[@]}" CMD...   the command talk runs: CMD as USER (or root)
#                                   on the conversation's terminal, clean environment
# Checks (host side, on out/NAME.*):
#   rc_is NAME CODE, saw NAME TEXT, saw_re NAME ERE, lacks NAME TEXT, lacks_re NAME ERE,
#   saw_in_order NAME TEXT1 TEXT2 (TEXT2 after TEXT1), count_of NAME TEXT,
#   user_field NAME USER PATH (status --json, e.g. passcode_lockout.locked),
#   events_of NAME USER [SERVICE] (audit rows), measured NAME MARK (converse.exp's @MARK, ms)

CALLERS_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/callers.bash"
CONVERSE="$(dirname "$CALLERS_LIB")/converse.exp"
PKAGENT="$(dirname "$CALLERS_LIB")/pkagent.sh"
export CALLERS_LIB CONVERSE PKAGENT
# shellcheck source=../../../scripts/lib/sandbox.sh
source "$(dirname "$CALLERS_LIB")/../../../scripts/lib/sandbox.sh"
# shellcheck source=contract.bash
source "$(dirname "$CALLERS_LIB")/contract.bash"

# ---- inside the namespace ----

talk() {
    local name=$1; shift
    local o="$SANDBOX_DIR/out/$name"
    expect -f "$CONVERSE" "$o.log" "$@" >/dev/null 2>"$o.err"
    echo $? >"$o.rc"
    tr -d '\r' <"$o.log" >"$o.txt" 2>/dev/null
}

snap() {
    bio status --json >"$SANDBOX_DIR/out/$1.status.json" 2>"$SANDBOX_DIR/out/$1.status.err"
    bio log --json --limit 1000 >"$SANDBOX_DIR/out/$1.events.json" 2>"$SANDBOX_DIR/out/$1.events.err"
}

# What `talk` spawns to run a command as a user or as root (expect cannot call shell functions):
#   talk NAME STEPS... -- "${AS[@]}" USER CMD...     talk NAME STEPS... -- "${ROOT[@]}" CMD...
AS=(bash "$SANDBOX_LIB" as)
ROOT=(bash "$SANDBOX_LIB" root)

# ---- host side ----

callers_setup() {
    if ! sandbox_create; then
        fail "sandbox: set up (root, unshare, setpriv, a build in $BUILD_DIR; ./scripts/deps)"
        finish
    fi
    export SANDBOX_PRIVATE_RUN=1 SANDBOX_PID_NS=1
    out="$SANDBOX_DIR/out"
    mkdir -m 0700 "$out"
}

in_sandbox() {
    local snippet=$1; shift
    sandbox_run "source \"\$CALLERS_LIB\" || exit 125
$snippet" "$@"
}

converse() {
    local name=$1
    in_sandbox 'talk "$@"' "$@"
    [ -f "$out/$name.rc" ] || echo 125 >"$out/$name.rc"
}

store() { in_sandbox 'snap "$1"' "$1"; }

callers_enrol() {
    in_sandbox '
        { sandbox_enrol "$1" "$2" right-index && printf "%s\n" "$3" | bio passcode set "$1" --stdin && bio enable "$1"; } \
            >"$SANDBOX_DIR/out/enrol-$1.log" 2>&1
    ' "$@"
}

rc_is() { [ "$(cat "$out/$1.rc" 2>/dev/null)" = "$2" ]; }
saw() { grep -qF -- "$2" "$out/$1.txt" 2>/dev/null; }
saw_re() { grep -qE -- "$2" "$out/$1.txt" 2>/dev/null; }
lacks() { [ -f "$out/$1.txt" ] && ! grep -qF -- "$2" "$out/$1.txt"; }
lacks_re() { [ -f "$out/$1.txt" ] && ! grep -qE -- "$2" "$out/$1.txt"; }
count_of() { python3 -c 'import sys; print(open(sys.argv[1], errors="replace").read().count(sys.argv[2]))' "$out/$1.txt" "$2" 2>/dev/null || echo 0; }
saw_in_order() {
    python3 -c '
import sys
t = open(sys.argv[1], errors="replace").read()
i = t.find(sys.argv[2])
sys.exit(0 if i >= 0 and t.find(sys.argv[3], i + len(sys.argv[2])) >= 0 else 1)' "$out/$1.txt" "$2" "$3" 2>/dev/null
}
user_field() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
u = [u for u in d["users"] if u["user"] == sys.argv[2]]
v = u[0] if u else None
for k in sys.argv[3].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print(json.dumps(v))' "$out/$1.status.json" "$2" "$3" 2>/dev/null || echo error
}
events_of() {
    python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["events"]
print(len([x for x in e if x["user"] == sys.argv[2] and (len(sys.argv) < 4 or x["service"] == sys.argv[3])]))' \
        "$out/$1.events.json" "${@:2}" 2>/dev/null || echo error
}
last_event() {   # last_event NAME USER FIELD: FIELD of USER's newest audit row
    python3 -c '
import json, sys
e = [x for x in json.load(open(sys.argv[1]))["events"] if x["user"] == sys.argv[2]]
print(e[0][sys.argv[3]] if e else "none")' "$out/$1.events.json" "$2" "$3" 2>/dev/null || echo error
}
measured() { awk -v m="$2" '$1 == m { print $2 }' "$out/$1.log.times" 2>/dev/null; }
# files NAME: what to show when a check on NAME fails.
files() { local n; for n in "$@"; do echo "$out/$n.txt" "$out/$n.rc" "$out/$n.err" "$out/$n.log.touch"; done; }

# The host's /etc (and the other files sshd, login, vlock and polkitd could touch) before and after.
callers_host_before() { etc_before="$(sandbox_etc_fingerprint)"; }
callers_host_after() {
    local after
    after="$(sandbox_etc_fingerprint)"
    printf '%s\n' "$etc_before" >"$out/etc.before"
    printf '%s\n' "$after" >"$out/etc.after"
    diff "$out/etc.before" "$out/etc.after" >"$out/etc.diff" 2>&1
    check "host: none of the sandbox's mounts (pam.d, /run, login records, polkit) is visible outside its namespace" \
        eval '! grep -qF "$SANDBOX_DIR" /proc/self/mountinfo && ! grep -qE " (sandbox-run|sandbox-sudo) " /proc/self/mountinfo' \
        -- /proc/self/mountinfo
    check "host: /etc/passwd, group, shadow, sudoers, pam.d, ssh, polkit-1, security, the login records and polkit's actions are byte-identical afterwards" \
        test "$etc_before" = "$after" -- "$out/etc.diff"
    check "host: no process of the sandbox is left (sshd, dbus-daemon, polkitd, sessions)" \
        eval '! pgrep -f "$SANDBOX_DIR" >/dev/null'
}
