#!/usr/bin/env bash
# End-to-end, issue 12: a polkit request through the REAL polkitd on a private system bus,
# answered by the REAL text agent (pkttyagent) on a terminal; polkit-agent-helper-1 (setuid
# root) runs the PAM service polkit-1 with the recommended stack and no terminal of its own, so
# the module talks through the conversation (touch request, then the PIN-or-password prompt).
#
#   bash Tests/EndToEnd/callers-polkit.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# Inside the sandbox: a private /run (dbus-daemon listens on /run/dbus/system_bus_socket, where
# the setuid helper and pkexec look), the sandbox's own action org.biounlock.sandbox.test
# (auth_self) and a rule that makes pkexec ask the users themselves (auth_self), both mounted
# over polkit's directories inside the namespace only. Requests: pkcheck (the test action) and
# pkexec (org.freedesktop.policykit.exec), each with pkttyagent registered for the requester
# (Tests/EndToEnd/lib/pkagent.sh). pkexec's own built-in agent is not used: polkit 122 (Debian 12)
# fails it with "No session for cookie" (polkit-org/polkit#423, fixed upstream in 124).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"
# shellcheck source=lib/callers.bash
source "$here/lib/callers.bash"

ALICE=bpalice ALICE_UID=4341 ALICE_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=bpalice-right-index
BOB=bpbob BOB_UID=4342 BOB_PW='bob-unix-Pw-9'
WRONG_PW='not-the-Pw-3'
export CONVERSE_TIMEOUT=20

for tool in /usr/lib/polkit-1/polkitd pkttyagent pkcheck pkexec dbus-daemon dbus-send; do
    command -v "$tool" >/dev/null 2>&1 || { fail "sandbox: $tool is installed (./scripts/deps: polkitd, pkexec, dbus-daemon)"; finish; }
done
[ -u /usr/lib/polkit-1/polkit-agent-helper-1 ] || { fail "sandbox: polkit-agent-helper-1 is setuid root"; finish; }
callers_host_before
trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP
callers_setup
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_PW"
sandbox_add_user "$BOB" "$BOB_UID" "$BOB_PW"
sandbox_write_config
# The default touch_first (2 s); timeout=5 only shortens a finger wait no check needs.
# With the profile's account line: the helper calls pam_acct_mgmt, never pam_setcred.
SANDBOX_STACK_ACCOUNT=1 sandbox_write_stack polkit-1 require_passcode=none timeout=5
export SANDBOX_POLKIT_RULES="polkit.addRule(function(action, subject) {
    if (action.id == \"org.freedesktop.policykit.exec\" && (subject.user == \"$ALICE\" || subject.user == \"$BOB\"))
        return polkit.Result.AUTH_SELF;
});"

callers_enrol "$ALICE" "$ALICE_FINGER" "$ALICE_PIN"
check "setup: $ALICE enrols a finger, sets a PIN and enables biometric unlock" test $? -eq 0 -- "$out/enrol-$ALICE.log"

# One namespace for every request: the bus and polkitd stay up between them.
# pk NAME USER STEP...: USER asks polkit for the test action (pkcheck) with pkttyagent on the terminal.
# px NAME USER STEP...: USER runs `pkexec sh -c 'echo RESULT-uid=$(id -u)'` the same way.
# The agent prints its prompt before it turns echo off: answers wait for that ("~").
# shellcheck disable=SC2016
in_sandbox '
    pk() { local name=$1 user=$2; shift 2
        talk "$name" "$@" -- "${AS[@]}" "$user" sh "$PKAGENT" pkcheck --action-id org.biounlock.sandbox.test --process @SELF@ --allow-user-interaction; }
    px() { local name=$1 user=$2; shift 2
        talk "$name" "$@" -- "${AS[@]}" "$user" sh "$PKAGENT" pkexec --disable-internal-agent /bin/sh -c "echo RESULT-uid=\$(id -u)"; }
    sandbox_polkit_start >"$SANDBOX_DIR/out/polkit-start.log" 2>&1 || exit 1
    pk pk-infra "$3" "=: \$" "~" ">$4"
    pk pk-unix "$1" "=: \$" "~" ">$2"
    snap pk-unix
    pk pk-pin "$1" "=: \$" "~" ">$5"
    snap pk-pin
    pk pk-enter "$1" "=: \$" "~" ">" "!$7"
    pk pk-wrong "$1" "=: \$" "~" ">$6"
    pk pk-wrongpin "$1" "=: \$" "~" ">1357"
    snap pk-wrongpin
    pk pk-unix2 "$1" "=: \$" "~" ">$2"
    snap pk-unix2
    px px-unix "$1" "=: \$" "~" ">$2"
    px px-pin "$1" "=: \$" "~" ">$5"
    sandbox_polkit_stop
' "$ALICE" "$ALICE_PW" "$BOB" "$BOB_PW" "$ALICE_PIN" "$WRONG_PW" "$ALICE_FINGER"
started=$?
check "polkit: a private system bus and the real polkitd start inside the sandbox" \
    test "$started" -eq 0 -- "$out/polkit-start.log" "$SANDBOX_DIR/polkit/dbus.log" "$SANDBOX_DIR/polkit/polkitd.log"

PK_INFO="$(touch_request polkit-1)"
PK_SEQ="$(prompt_or_enter "$CRED_PIN" polkit-1)"
pk_ok() { rc_is "$1" 0 && saw "$1" "AUTHENTICATION COMPLETE"; }
pk_refused() { ! rc_is "$1" 0 && saw "$1" "AUTHENTICATION FAILED"; }
px_ok() { rc_is "$1" 0 && saw "$1" "RESULT-uid=0"; }
# shellcheck disable=SC2046
{
check "polkit, infrastructure: pkcheck for $BOB (not enabled): pkttyagent shows pam_unix's '$UNIX_PROMPT', the Unix password authorises" \
    eval 'pk_ok pk-infra && saw pk-infra "$UNIX_PROMPT" && lacks_re pk-infra "$BIOUNLOCK_WORDS_RE"' -- $(files pk-infra) "$SANDBOX_DIR/polkit/polkitd.log"
check "polkit, pkcheck: the agent shows '$PK_INFO', then '$PK_SEQ'" \
    saw_in_order pk-unix "$PK_INFO" "$PK_SEQ" -- $(files pk-unix)
check "polkit, pkcheck: the Unix password typed there authorises, with no second prompt" \
    eval 'pk_ok pk-unix && lacks pk-unix "$UNIX_PROMPT"' -- $(files pk-unix)
check "polkit, pkcheck: the Unix password was not counted (the helper never calls pam_setcred)" \
    eval '[ "$(user_field pk-unix "$ALICE" passcode_failures)" = 0 ] && [ "$(user_field pk-unix "$ALICE" biometric_failures)" = 0 ]' -- "$out/pk-unix.status.json"
check "polkit, pkcheck: the PIN typed there authorises (audit row: polkit-1, success)" \
    eval 'pk_ok pk-pin && saw pk-pin "$PK_SEQ" && [ "$(last_event pk-pin "$ALICE" service)" = polkit-1 ] && [ "$(last_event pk-pin "$ALICE" outcome)" = success ]' \
    -- $(files pk-pin) "$out/pk-pin.events.json"
check "polkit, pkcheck: Enter alone there, then a touch, authorises" \
    eval 'pk_ok pk-enter && lacks pk-enter "$UNIX_PROMPT"' -- $(files pk-enter)
check "polkit, pkcheck: a wrong secret is refused" pk_refused pk-wrong -- $(files pk-wrong)
check "polkit, pkcheck: a wrong PIN there is refused and counted" \
    eval 'pk_refused pk-wrongpin && [ "$(user_field pk-wrongpin "$ALICE" passcode_failures)" = 1 ]' -- $(files pk-wrongpin) "$out/pk-wrongpin.status.json"
check "polkit, pkcheck: the Unix password then clears the count (pam_sm_acct_mgmt saw pam_unix accept it; no pam_setcred)" \
    eval 'pk_ok pk-unix2 && [ "$(user_field pk-unix2 "$ALICE" passcode_failures)" = 0 ]' -- $(files pk-unix2) "$out/pk-unix2.status.json"
check "polkit, pkexec: the Unix password at '$PK_SEQ' runs the command as root" \
    eval 'saw px-unix "$PK_SEQ" && px_ok px-unix' -- $(files px-unix)
check "polkit, pkexec: the PIN there runs the command as root" px_ok px-pin -- $(files px-pin)
}

callers_host_after
finish
