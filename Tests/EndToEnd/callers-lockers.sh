#!/usr/bin/env bash
# End-to-end, issue 12: pamtester with and without a terminal, vlock, lockers that answer every
# prompt with the one secret they hold (i3lock, swaylock: pamtester fed from a pipe, touch_first=0),
# a locker that runs as the user, and a script piping a password to sudo -S -- all real programs
# and real libpam inside the sandbox, with the recommended stack (the module, then pam_unix nullok
# try_first_pass).
#
#   bash Tests/EndToEnd/callers-lockers.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# Without a terminal and with the default configuration the touch request comes first, then,
# while the reader still waits (touch_first, 2 s, not the 10 s timeout), the prompt that takes
# the PIN or the password; Enter alone there waits for the touch. The time to the first prompt is
# printed as a measurement ("# measured: ..."), never asserted.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"
# shellcheck source=lib/callers.bash
source "$here/lib/callers.bash"

ALICE=blalice ALICE_UID=4331 ALICE_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=blalice-right-index
BOB=blbob BOB_UID=4332 BOB_PW='bob-unix-Pw-9'
WRONG_PW='not-the-Pw-3' WRONG_PIN=1357
export CONVERSE_TIMEOUT=20

for tool in pamtester vlock stdbuf sudo; do
    command -v "$tool" >/dev/null 2>&1 || { fail "sandbox: $tool is installed (./scripts/deps)"; finish; }
done
[ -u /usr/sbin/vlock-main ] || { fail "sandbox: /usr/sbin/vlock-main is setuid root (./scripts/deps: vlock)"; finish; }
callers_host_before
trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP
callers_setup
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_PW"
sandbox_add_user "$BOB" "$BOB_UID" "$BOB_PW"
sandbox_lock_account root
sandbox_write_config
# pamtester: the default configuration (timeout 10 s, touch_first 2 s). Elsewhere timeout=4
# only shortens a finger wait that none of these checks needs.
sandbox_write_stack pamtester require_passcode=none
sandbox_write_stack sudo require_passcode=none timeout=4
sandbox_write_stack vlock require_passcode=none timeout=4
# Lockers that answer every prompt with the one secret they hold: touch_first=0.
sandbox_write_stack i3lock require_passcode=none touch_first=0 timeout=4
sandbox_write_stack swaylock require_passcode=none touch_first=0 timeout=4

callers_enrol "$ALICE" "$ALICE_FINGER" "$ALICE_PIN"
check "setup: $ALICE enrols a finger, sets a PIN and enables biometric unlock" test $? -eq 0 -- "$out/enrol-$ALICE.log"

# piped NAME USER INPUT CMD...: CMD as USER ("root": as root) in a fresh namespace, with no
# terminal, INPUT on its standard input (all at once, like a locker's or a script's secret);
# stdout and stderr in out/NAME.txt.
piped() {
    local name=$1 user=$2 input=$3; shift 3
    printf '%s' "$input" >"$out/$name.in"
    in_sandbox '
        name=$1 user=$2; shift 2; o="$SANDBOX_DIR/out/$name"
        if [ "$user" = root ]; then sandbox_root setsid -w "$@" <"$o.in" >"$o.txt" 2>&1
        else sandbox_as "$user" "$@" <"$o.in" >"$o.txt" 2>&1; fi
        echo $? >"$o.rc"
    ' "$name" "$user" "$@"
    [ -f "$out/$name.rc" ] || echo 125 >"$out/$name.rc"
}
pamtester_ok() { rc_is "$1" 0 && saw "$1" "pamtester: successfully authenticated"; }
pamtester_refused() { ! rc_is "$1" 0 && saw "$1" "Authentication failure"; }
failures() { echo "$(user_field "$1" "$ALICE" passcode_failures)/$(user_field "$1" "$ALICE" biometric_failures)"; }
PT=(stdbuf -o0 pamtester -v pamtester "$ALICE" authenticate)

# ---------------------------------------------------------------- pamtester on a terminal
converse pt-infra '=: $' ">$BOB_PW" -- "${ROOT[@]}" pamtester -v pamtester "$BOB" authenticate
# shellcheck disable=SC2046
{
check "pamtester on a terminal, infrastructure: $BOB (not enabled) gets pam_unix's '$UNIX_PROMPT', the Unix password authenticates" \
    eval 'pamtester_ok pt-infra && saw pt-infra "$UNIX_PROMPT" && lacks_re pt-infra "$BIOUNLOCK_WORDS_RE"' -- $(files pt-infra)
PT_TTY="$(prompt_type_or_touch "$CRED_PIN" pamtester)"
converse pt-touch '=: $' "!$ALICE_FINGER" -- "${ROOT[@]}" pamtester -v pamtester "$ALICE" authenticate
check "pamtester on a terminal: '$PT_TTY', and a touch authenticates with no key" \
    eval 'saw pt-touch "$PT_TTY" && pamtester_ok pt-touch && lacks pt-touch "$UNIX_PROMPT"' -- $(files pt-touch)
converse pt-unix '=: $' ">$ALICE_PW" -- "${ROOT[@]}" pamtester -v pamtester "$ALICE" authenticate
check "pamtester on a terminal: the Unix password at that prompt authenticates, with no second prompt" \
    eval 'saw pt-unix "$PT_TTY" && pamtester_ok pt-unix && lacks pt-unix "$UNIX_PROMPT"' -- $(files pt-unix)
converse pt-pin '=: $' ">$ALICE_PIN" -- "${ROOT[@]}" pamtester -v pamtester "$ALICE" authenticate
check "pamtester on a terminal: the PIN at that prompt authenticates" \
    eval 'saw pt-pin "$PT_TTY" && pamtester_ok pt-pin' -- $(files pt-pin)
}

# ---------------------------------------------------------------- pamtester without a terminal
PT_INFO="$(touch_request pamtester)"
PT_SEQ="$(prompt_or_enter "$CRED_PIN" pamtester)"
converse np-pin -pipe '=: $' '@prompt' ">$ALICE_PIN" -- "${ROOT[@]}" "${PT[@]}"
# shellcheck disable=SC2046
{
check "pamtester without a terminal, default configuration: '$PT_INFO', then '$PT_SEQ' (the reader still waiting)" \
    saw_in_order np-pin "$PT_INFO" "$PT_SEQ" -- $(files np-pin)
check "pamtester without a terminal: the PIN at that prompt authenticates" pamtester_ok np-pin -- $(files np-pin)
echo "# measured: pamtester without a terminal, default configuration: first prompt after $(measured np-pin prompt) ms (done-when: within 3500 ms; never asserted)"
converse np-unix -pipe '=: $' '@prompt' ">$ALICE_PW" -- "${ROOT[@]}" "${PT[@]}"
store np-unix
check "pamtester without a terminal: the Unix password at that prompt authenticates, with no second prompt" \
    eval 'saw np-unix "$PT_SEQ" && pamtester_ok np-unix && lacks np-unix "$UNIX_PROMPT"' -- $(files np-unix)
check "pamtester without a terminal: the Unix password was not counted" test "$(failures np-unix)" = 0/0 -- "$out/np-unix.status.json"
echo "# measured: pamtester without a terminal, default configuration: first prompt after $(measured np-unix prompt) ms"
converse np-enter -pipe "-$UNIX_PROMPT\$" '=: $' '>' "!$ALICE_FINGER" -- "${ROOT[@]}" "${PT[@]}"
check "pamtester without a terminal: Enter alone at '$PT_SEQ', then a touch, authenticates" \
    eval 'saw np-enter "$PT_SEQ" && pamtester_ok np-enter && lacks np-enter "$UNIX_PROMPT"' -- $(files np-enter)
converse np-wrong -pipe '=: $' ">$WRONG_PW" -- "${ROOT[@]}" "${PT[@]}"
check "pamtester without a terminal: a wrong secret is refused" pamtester_refused np-wrong -- $(files np-wrong)
}

# ---------------------------------------------------------------- lockers: one secret for every prompt
I3_SEQ="$(prompt_or_enter "$CRED_PIN" i3lock)"
three() { printf '%s\n%s\n%s\n' "$1" "$1" "$1"; }
piped i3-unix root "$(three "$ALICE_PW")" stdbuf -o0 pamtester -v i3lock "$ALICE" authenticate
piped i3-pin root "$(three "$ALICE_PIN")" stdbuf -o0 pamtester -v i3lock "$ALICE" authenticate
piped i3-wrong root "$(three "$WRONG_PW")" stdbuf -o0 pamtester -v i3lock "$ALICE" authenticate
store i3
# shellcheck disable=SC2046
{
check "i3lock-style (touch_first=0, the Unix password given to every prompt): it authenticates $ALICE" \
    pamtester_ok i3-unix -- $(files i3-unix)
check "i3lock-style: one prompt ('$I3_SEQ') and no touch request (touch_first=0)" \
    eval '[ "$(count_of i3-unix "$I3_SEQ")" = 1 ] && lacks i3-unix "$(touch_request i3lock)" && lacks i3-unix "$UNIX_PROMPT"' -- $(files i3-unix)
check "i3lock-style: the PIN given to every prompt authenticates too" pamtester_ok i3-pin -- $(files i3-pin)
check "i3lock-style: a wrong secret given to every prompt does not" pamtester_refused i3-wrong -- $(files i3-wrong)
check "i3lock-style: nothing counted for the Unix password or the wrong secret (letters: cannot be a PIN)" \
    test "$(failures i3)" = 0/0 -- "$out/i3.status.json"
}

# A locker that runs as the user (swaylock): the root-only store is out of its reach, so the
# module steps aside (unavailable) and pam_unix checks the user's own password (unix_chkpwd).
piped sway-unix "$ALICE" "$(three "$ALICE_PW")" stdbuf -o0 pamtester -v swaylock "$ALICE" authenticate
piped sway-wrong "$ALICE" "$(three "$WRONG_PW")" stdbuf -o0 pamtester -v swaylock "$ALICE" authenticate
# shellcheck disable=SC2046
{
check "a locker running as the user (swaylock-style): pam_unix's '$UNIX_PROMPT' and the Unix password unlock" \
    eval 'pamtester_ok sway-unix && saw sway-unix "$UNIX_PROMPT"' -- $(files sway-unix)
check "a locker running as the user: a wrong secret does not unlock" pamtester_refused sway-wrong -- $(files sway-wrong)
}

# A script piping a password to sudo -S (no terminal, the default configuration).
# shellcheck disable=SC2016
SUDO_CMD=(sudo -S -k sh -c 'echo RESULT-uid=$(id -u)')
piped sudo-unix "$ALICE" "$ALICE_PW"$'\n' "${SUDO_CMD[@]}"
piped sudo-pin "$ALICE" "$ALICE_PIN"$'\n' "${SUDO_CMD[@]}"
piped sudo-wrong "$ALICE" "$WRONG_PW"$'\n' "${SUDO_CMD[@]}"
sudo_ok() { rc_is "$1" 0 && saw "$1" "RESULT-uid=0"; }
# shellcheck disable=SC2046
{
check "a script piping the Unix password to sudo -S: the touch request, then '$(prompt_or_enter "$CRED_PIN" sudo)' takes it; sudo runs the command" \
    eval 'saw_in_order sudo-unix "$(touch_request sudo)" "$(prompt_or_enter "$CRED_PIN" sudo)" && sudo_ok sudo-unix' -- $(files sudo-unix)
check "a script piping the PIN to sudo -S: sudo runs the command" sudo_ok sudo-pin -- $(files sudo-pin)
check "a script piping a wrong password to sudo -S: sudo refuses" eval '! sudo_ok sudo-wrong' -- $(files sudo-wrong)
}

# ---------------------------------------------------------------- vlock (vlock-main is setuid root)
# vlock: "Please press [ENTER] to unlock.", then the user's authentication (vlock writes
# "USER's " before it); when that fails, root's ("root's Password: "; root is locked here), then
# it starts over. vlock keeps echo off while locked, and prints each prompt before it sets the
# terminal with TCSAFLUSH (throwing away what was typed): each answer waits until vlock sleeps
# waiting for input ("~"; typing at the prompt alone lost the password now and then under load,
# and vlock waited for ever). Root's prompt ends a conversation that does not expect it (126).
VL_TTY="$(prompt_type_or_touch "$CRED_PIN" vlock)"
vlock_as() {
    local name=$1 user=$2; shift 2
    converse "$name" "-root's $UNIX_PROMPT\$" '=ENTER' '>' "$@" -- "${AS[@]}" "$user" vlock -c
}
vlock_ok() { rc_is "$1" 0 && lacks "$1" "Authentication failure"; }
vlock_as vl-infra "$BOB" '=: $' '~' ">$BOB_PW"
# shellcheck disable=SC2046
{
check "vlock, infrastructure: $BOB (not enabled) gets '$BOB's $UNIX_PROMPT' and the Unix password unlocks" \
    eval 'vlock_ok vl-infra && saw vl-infra "$BOB'"'"'s $UNIX_PROMPT" && lacks_re vl-infra "$BIOUNLOCK_WORDS_RE"' -- $(files vl-infra)
vlock_as vl-touch "$ALICE" '=: $' '~' "!$ALICE_FINGER"
check "vlock: '$ALICE's $VL_TTY', and a touch unlocks" \
    eval 'saw_in_order vl-touch "$ALICE'"'"'s " "$VL_TTY" && vlock_ok vl-touch' -- $(files vl-touch)
vlock_as vl-unix "$ALICE" '=: $' '~' ">$ALICE_PW"
check "vlock: the Unix password typed at that prompt unlocks, with no second prompt" \
    eval 'saw vl-unix "$VL_TTY" && vlock_ok vl-unix && lacks vl-unix "$UNIX_PROMPT"' -- $(files vl-unix)
vlock_as vl-pin "$ALICE" '=: $' '~' ">$ALICE_PIN"
check "vlock: the PIN typed at that prompt unlocks" eval 'saw vl-pin "$VL_TTY" && vlock_ok vl-pin' -- $(files vl-pin)
vlock_as vl-wrong "$ALICE" '-x^' '=: $' '~' ">$WRONG_PIN" "=root's $UNIX_PROMPT\$" '~' '>' '=ENTER' '>' \
    "-root's $UNIX_PROMPT\$" '=: $' '~' ">$ALICE_PW"
check "vlock: a wrong PIN fails, root's password is asked (and fails), then the Unix password unlocks" \
    eval 'saw_in_order vl-wrong "Authentication failure" "root'"'"'s $UNIX_PROMPT" && saw_in_order vl-wrong "root'"'"'s" "$VL_TTY" && rc_is vl-wrong 0' -- $(files vl-wrong)
}

callers_host_after
finish
