#!/usr/bin/env bash
# End-to-end: the REAL /usr/bin/sudo against build/pam_biounlock.so, in a private mount
# namespace (scripts/lib/sandbox.sh) so the host's /etc is never changed.
#
#   bash Tests/EndToEnd/sudo.sh          (as root; BUILD_DIR defaults to the repo's build/)
#
# Prints one "ok - ..." / "not ok - ..." line per check and ends with "N passed, N failed".
# Exits 0 only when every check passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=../../scripts/lib/sandbox.sh
source "$repo/scripts/lib/sandbox.sh"

# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"

ALICE=bioalice ALICE_UID=4242 ALICE_UNIX_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=alice-right-index
BOB=biobob BOB_UID=4243 BOB_UNIX_PW='bob-unix-Pw-9'

etc_before="$(sandbox_etc_fingerprint)"
trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP

if ! sandbox_create; then
    fail "sandbox: set up (root, unshare, setpriv, setuid sudo, a build in $BUILD_DIR)"
    finish
fi
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_UNIX_PW"
sandbox_add_user "$BOB" "$BOB_UID" "$BOB_UNIX_PW"
sandbox_write_config
out="$SANDBOX_DIR/out"
mkdir -m 0700 "$out"

# ---- setup: bioalice enrols a finger, sets a PIN and turns biometric unlock on ----
sandbox_run '
    {
        sandbox_enrol "$1" "$2" right-index &&
        printf "%s\n" "$3" | bio passcode set "$1" --stdin &&
        bio --sensor simulated enable "$1"
    } >"$4/setup.log" 2>&1
' "$ALICE" "$ALICE_FINGER" "$ALICE_PIN" "$out"
setup_rc=$?
check "setup: $ALICE enrols a finger (5 simulated touches), sets a PIN and enables biometric unlock" \
    test "$setup_rc" -eq 0 -- "$out/setup.log"
if [ "$setup_rc" -ne 0 ]; then finish; fi

# run_sudo NAME USER STDIN-TEXT [TOUCH-ID...]: inside a fresh namespace, the user runs
# `sudo -S -k id -u` with STDIN-TEXT as standard input ("" = /dev/null) while a background
# root process touches the simulated reader with each TOUCH-ID in turn.
# Leaves $out/NAME.out (stdout), .err (stderr), .rc (sudo's status), .touch/.touchrc (finger).
run_sudo() {
    local name=$1 user=$2 input=$3; shift 3
    if [ -n "$input" ]; then printf '%s' "$input" >"$out/$name.in"; else : >"$out/$name.in"; fi
    sandbox_run '
        name=$1 user=$2; shift 2
        o="$SANDBOX_DIR/out/$name"
        if [ $# -gt 0 ]; then SANDBOX_TOUCH_LOG="$o.touch" sandbox_touch_bg "$@"; fi
        sandbox_as "$user" /usr/bin/sudo -S -k id -u <"$o.in" >"$o.out" 2>"$o.err"
        echo $? >"$o.rc"
        sandbox_touch_end 3
        echo $? >"$o.touchrc"
    ' "$name" "$user" "$@"
    [ -f "$out/$name.rc" ] || echo 125 >"$out/$name.rc"
    cat "$out/$name.out" "$out/$name.err" >"$out/$name.all" 2>/dev/null
}
rc_of() { cat "$out/$1.rc" 2>/dev/null || echo missing; }
ran_as_root() { [ "$(rc_of "$1")" = 0 ] && grep -qx 0 "$out/$1.out"; }
saw() { grep -qF -- "$2" "$out/$1.all"; }
not_saw() { ! grep -qF -- "$2" "$out/$1.all"; }
touches_taken() { [ "$(cat "$out/$1.touchrc" 2>/dev/null)" = 0 ]; }
show() { local n=$1; echo "$out/$n.rc" "$out/$n.out" "$out/$n.err" "$out/$n.touch"; }

# ---- (p) the first sudo after enrolment: the passcode is required (require_passcode default) ----
run_sudo first "$ALICE" "$ALICE_PIN"$'\n'
# shellcheck disable=SC2046
{
check "(p) first sudo after setup: the user saw 'PIN required: enter it once before using your finger.'" \
    saw first "PIN required: enter it once before using your finger." -- $(show first)
check "(p) first sudo after setup: no touch was asked for, the PIN let sudo succeed" \
    eval 'ran_as_root first && not_saw first "Touch the fingerprint reader"' -- $(show first)
}

# ---- (a) a simulated touch of the enrolled finger, nothing on stdin ----
run_sudo touch "$ALICE" "" "$ALICE_FINGER"
# shellcheck disable=SC2046
{
check "(a) touch: sudo -S -k id -u with empty stdin succeeds and prints 0" ran_as_root touch -- $(show touch)
check "(a) touch: the user saw 'Touch the fingerprint reader to authenticate for running a command as root'" \
    saw touch "Touch the fingerprint reader to authenticate for running a command as root" -- $(show touch)
check "(a) touch: no password or PIN was asked for" \
    eval 'not_saw touch "password for" && not_saw touch "PIN or password"' -- $(show touch)
check "(a) touch: the sensor took the simulated touch" touches_taken touch -- $(show touch)
}

# ---- (e) status --json after the touch ----
sandbox_run 'bio status "$1" --json >"$2/status.json" 2>"$2/status.err"; echo $? >"$2/status.rc"' "$ALICE" "$out"
check "(e) status: 'biounlock status $ALICE --json' exits 0 and parses as JSON" \
    eval '[ "$(rc_of status)" = 0 ] && python3 -c "import json,sys; json.load(sys.stdin)" <"$out/status.json"' \
    -- "$out/status.rc" "$out/status.json" "$out/status.err"
check "(e) status: biometric_failures is 0 and last_success is set after the touch" \
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
u = [u for u in d["users"] if u["user"] == sys.argv[2]][0]
sys.exit(0 if u["biometric_failures"] == 0 and u["last_success"] else 1)
' "$out/status.json" "$ALICE" -- "$out/status.json"

# ---- (b) three wrong fingers, then the right PIN on stdin ----
run_sudo pin "$ALICE" "$ALICE_PIN"$'\n' mallory mallory mallory
# shellcheck disable=SC2046
{
check "(b) PIN: after 3 wrong fingers the right PIN on stdin lets sudo succeed (prints 0)" ran_as_root pin -- $(show pin)
check "(b) PIN: the user saw 'Fingerprint not recognised'" saw pin "Fingerprint not recognised" -- $(show pin)
check "(b) PIN: the user was asked 'PIN or password for running a command as root: '" \
    saw pin "PIN or password for running a command as root: " -- $(show pin)
check "(b) PIN: the sensor took all 3 wrong touches" touches_taken pin -- $(show pin)
}

# ---- (c) three wrong fingers, then a wrong PIN (and nothing more on stdin) ----
run_sudo wrongpin "$ALICE" "0000"$'\n' mallory mallory mallory
# shellcheck disable=SC2046
{
check "(c) wrong PIN: sudo exits non-zero and does not run the command" \
    eval '[ "$(rc_of wrongpin)" != 0 ] && ! grep -qx 0 "$out/wrongpin.out"' -- $(show wrongpin)
check "(c) wrong PIN: sudo reported the failed attempt" saw wrongpin "incorrect password attempt" -- $(show wrongpin)
check "(c) wrong PIN: handed on to pam_unix (try_first_pass), which refused it without asking again" \
    not_saw wrongpin "password for $ALICE" -- $(show wrongpin)
check "(c) wrong PIN: no 'Wrong passcode' from biounlock (the caller reports the failure)" \
    not_saw wrongpin "Wrong passcode" -- $(show wrongpin)
}

# ---- (g) the Unix password typed at biounlock's first prompt (sudo -S, a script, one secret) ----
run_sudo habit "$ALICE" "$ALICE_UNIX_PW"$'\n'
# shellcheck disable=SC2046
{
check "(g) one secret: the Unix password given to biounlock's prompt lets sudo succeed" ran_as_root habit -- $(show habit)
check "(g) one secret: the prompt said what it takes: 'PIN or password for running a command as root, or touch the reader, then press Enter: '" \
    saw habit "PIN or password for running a command as root, or touch the reader, then press Enter: " -- $(show habit)
check "(g) one secret: nobody typed it twice (no '[sudo] password for' prompt: pam_unix try_first_pass took it)" \
    not_saw habit "password for $ALICE" -- $(show habit)
}
sandbox_run 'bio status "$1" --json >"$2/status2.json" 2>&1' "$ALICE" "$out"
check "(g) one secret: the Unix password cost no passcode failure, and the wrong PIN in (c) was cleared by it" \
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
u = [u for u in d["users"] if u["user"] == sys.argv[2]][0]
sys.exit(0 if u["passcode_failures"] == 0 else 1)
' "$out/status2.json" "$ALICE" -- "$out/status2.json"

# ---- (f) three wrong fingers, Enter alone at the PIN prompt, then the Unix password ----
run_sudo enter "$ALICE" $'\n'"$ALICE_UNIX_PW"$'\n' mallory mallory mallory
# shellcheck disable=SC2046
{
check "(f) Enter alone: sudo falls through to pam_unix and succeeds with the Unix password" ran_as_root enter -- $(show enter)
check "(f) Enter alone: the user was asked for the PIN or password, then '[sudo] password for $ALICE: '" \
    eval 'saw enter "PIN or password for running a command as root: " && saw enter "[sudo] password for $ALICE: "' -- $(show enter)
}

# ---- (d) a user who has not enabled biometric unlock: straight to the Unix password ----
run_sudo bob "$BOB" "$BOB_UNIX_PW"$'\n'
# shellcheck disable=SC2046
{
check "(d) not enabled: $BOB's sudo succeeds with the Unix password via pam_unix" ran_as_root bob -- $(show bob)
check "(d) not enabled: $BOB is not asked for a finger or a PIN" \
    eval 'not_saw bob "Touch the fingerprint reader" && not_saw bob "PIN or password"' -- $(show bob)
check "(d) not enabled: $BOB was asked '[sudo] password for $BOB: '" saw bob "[sudo] password for $BOB: " -- $(show bob)
}

# ---- the host's /etc ----
etc_after="$(sandbox_etc_fingerprint)"
printf '%s\n' "$etc_before" >"$out/etc.before"
printf '%s\n' "$etc_after" >"$out/etc.after"
diff "$out/etc.before" "$out/etc.after" >"$out/etc.diff" 2>&1
check "host: none of the sandbox's mounts is visible outside its namespace" \
    eval '! grep -qF "$SANDBOX_DIR" /proc/self/mountinfo && ! grep -q " /run/sudo .*sandbox-sudo" /proc/self/mountinfo' \
    -- /proc/self/mountinfo
check "host: /etc/passwd, /etc/group, /etc/shadow, /etc/sudoers and /etc/pam.d are byte-identical afterwards" \
    test "$etc_before" = "$etc_after" -- "$out/etc.diff"

finish
