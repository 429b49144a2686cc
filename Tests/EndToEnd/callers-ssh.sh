#!/usr/bin/env bash
# End-to-end, issue 12: the REAL sshd (UsePAM yes) on 127.0.0.1 and a free port, inside the
# sandbox (private mount and PID namespaces, private /run, its own host key and config), with
# the recommended stack in pam.d/sshd (the module, then pam_unix nullok try_first_pass). The
# real ssh client: through sshpass in PasswordAuthentication mode (sshd answers every PAM prompt
# with the one password it holds), through expect in keyboard-interactive mode.
#
#   bash Tests/EndToEnd/callers-ssh.sh       (as root; BUILD_DIR defaults to the repo's build/)
#
# remote=ignore (the default): biounlock steps aside for a remote session in both modes -- the
# Unix password works, nothing of biounlock reaches the client, nothing is counted, no audit row.
# remote=passcode: no finger; the PIN and the Unix password both work, a wrong secret does not.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"
# shellcheck source=lib/callers.bash
source "$here/lib/callers.bash"

ALICE=bsalice ALICE_UID=4311 ALICE_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=bsalice-right-index
BOB=bsbob BOB_UID=4312 BOB_PW='bob-unix-Pw-9'
WRONG_PW='not-the-Pw-3' WRONG_PIN=1357

for tool in sshd ssh sshpass ssh-keygen; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] \
        || { fail "sandbox: $tool is installed (./scripts/deps: openssh-server, openssh-client, sshpass)"; finish; }
done
callers_host_before
trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP
callers_setup
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_PW"
sandbox_add_user "$BOB" "$BOB_UID" "$BOB_PW"
sandbox_write_config
# timeout=5 only bounds a module that would wait for a finger; remote sessions never should.
sandbox_write_stack sshd timeout=5 require_passcode=none

callers_enrol "$ALICE" "$ALICE_FINGER" "$ALICE_PIN"
check "setup: $ALICE enrols a finger, sets a PIN and enables biometric unlock; $BOB has not" \
    test $? -eq 0 -- "$out/enrol-$ALICE.log"
store before

# In the namespace, with sshd running:
#   ssh_password NAME USER SECRET   sshpass gives SECRET to ssh; sshd to every PAM prompt. An
#                                   interactive shell on a pty (-tt), so that sshd shows the client
#                                   every PAM message it was given (its "loginmsg").
#   ssh_kbdint NAME USER STEP...    keyboard-interactive: each PAM prompt reaches the client, which
#                                   expect answers (converse.exp steps)
ssh_lib='
ssh_password() {
    local o="$SANDBOX_DIR/out/$1"
    printf "echo RESULT-user=\$(id -un); exit\n" | timeout -k 5 60 env -i PATH=/usr/bin:/bin HOME=/nonexistent SSHPASS="$3" \
        sshpass -e ssh -tt "${SANDBOX_SSH_OPTS[@]}" -o PreferredAuthentications=password "$2@127.0.0.1" >"$o.log" 2>&1
    echo $? >"$o.rc"
    tr -d "\r" <"$o.log" >"$o.txt"
}
ssh_kbdint() {
    local name=$1 user=$2; shift 2
    talk "$name" "$@" -- env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        ssh "${SANDBOX_SSH_OPTS[@]}" -o PreferredAuthentications=keyboard-interactive "$user@127.0.0.1" "echo RESULT-user=\$(id -un)"
}
'
ok_as() { rc_is "$1" 0 && saw "$1" "RESULT-user=$2"; }
refused() { ! rc_is "$1" 0 && lacks "$1" "RESULT-user="; }
counted() { [ "$(user_field "$1" "$ALICE" passcode_failures)" = "$2" ] && [ "$(user_field "$1" "$ALICE" biometric_failures)" = 0 ]; }
no_new_rows() { [ "$(events_of "$1" "$ALICE")" = "$(events_of before "$ALICE")" ]; }
sshd_log() { echo "$SANDBOX_DIR/ssh/sshd.log"; }

# ---------------------------------------------------------------- remote=ignore, PasswordAuthentication
in_sandbox "$ssh_lib"'
    sandbox_sshd_start password >"$SANDBOX_DIR/out/sshd-pw.log" 2>&1 || exit 1
    ssh_password pw-bob "$1" "$2"
    ssh_password pw-unix "$3" "$4"
    ssh_password pw-pin "$3" "$5"
    ssh_password pw-wrong "$3" "$6"
    snap pw-after
    sandbox_sshd_stop
' "$BOB" "$BOB_PW" "$ALICE" "$ALICE_PW" "$ALICE_PIN" "$WRONG_PW"
check "sshd password mode: sshd started on 127.0.0.1 (a free port) inside the sandbox" test $? -eq 0 -- "$out/sshd-pw.log" "$(sshd_log)"
# shellcheck disable=SC2046
{
check "sshd password, infrastructure: $BOB (biometric unlock not enabled) logs in with the Unix password" \
    ok_as pw-bob "$BOB" -- $(files pw-bob) "$(sshd_log)"
check "sshd password, remote=ignore: $ALICE (enrolled) logs in with the Unix password sshd gives every prompt" \
    ok_as pw-unix "$ALICE" -- $(files pw-unix) "$(sshd_log)"
# sshd shows the PAM messages it was given only once the login succeeded (on the session's pty).
check "sshd password, remote=ignore: the client, logged in, saw nothing of biounlock (no touch request, PIN or fingerprint text)" \
    eval 'ok_as pw-unix "$ALICE" && lacks_re pw-unix "$BIOUNLOCK_WORDS_RE"' -- $(files pw-unix)
check "sshd password, remote=ignore: the biounlock PIN is not a way in over ssh (pam_unix alone decides)" \
    refused pw-pin -- $(files pw-pin)
check "sshd password, remote=ignore: a wrong password is refused" refused pw-wrong -- $(files pw-wrong)
check "sshd password, remote=ignore: nothing counted ($ALICE's passcode and finger failures stay 0 after the PIN and a wrong password)" \
    counted pw-after 0 -- "$out/pw-after.status.json"
check "sshd password, remote=ignore: no audit row for any of $ALICE's three logins" no_new_rows pw-after -- "$out/pw-after.events.json"
}

# ---------------------------------------------------------------- remote=ignore, keyboard-interactive
in_sandbox "$ssh_lib"'
    sandbox_sshd_start kbdint >"$SANDBOX_DIR/out/sshd-kbd.log" 2>&1 || exit 1
    ssh_kbdint kbd-bob "$1" "=: \$" ">$2"
    ssh_kbdint kbd-unix "$3" "=: \$" ">$4"
    ssh_kbdint kbd-pin "$3" "=: \$" ">$5"
    snap kbd-after
    sandbox_sshd_stop
' "$BOB" "$BOB_PW" "$ALICE" "$ALICE_PW" "$ALICE_PIN"
check "sshd keyboard-interactive: sshd started on 127.0.0.1 inside the sandbox" test $? -eq 0 -- "$out/sshd-kbd.log" "$(sshd_log)"
# shellcheck disable=SC2046
{
check "sshd keyboard-interactive, infrastructure: $BOB logs in with the Unix password at pam_unix's 'Password: '" \
    eval 'ok_as kbd-bob "$BOB" && saw kbd-bob "($BOB@127.0.0.1) $UNIX_PROMPT"' -- $(files kbd-bob) "$(sshd_log)"
check "sshd keyboard-interactive, remote=ignore: $ALICE's only prompt is pam_unix's '($ALICE@127.0.0.1) Password: ', and the Unix password logs her in" \
    eval 'ok_as kbd-unix "$ALICE" && saw kbd-unix "($ALICE@127.0.0.1) $UNIX_PROMPT" && [ "$(count_of kbd-unix "@127.0.0.1) ")" = 1 ]' -- $(files kbd-unix)
check "sshd keyboard-interactive, remote=ignore: the client saw nothing of biounlock" \
    eval 'rc_is kbd-unix 0 && lacks_re kbd-unix "$BIOUNLOCK_WORDS_RE"' -- $(files kbd-unix)
check "sshd keyboard-interactive, remote=ignore: the biounlock PIN typed at 'Password: ' is refused" refused kbd-pin -- $(files kbd-pin)
check "sshd keyboard-interactive, remote=ignore: nothing counted, no audit row" \
    eval 'counted kbd-after 0 && no_new_rows kbd-after' -- "$out/kbd-after.status.json" "$out/kbd-after.events.json"
}

# ---------------------------------------------------------------- sudo typed in an SSH session
# The sandbox has no logind, and sudo's env_reset hides SSH_CONNECTION from the module: before
# issue 33's fallback, sudo over SSH showed biounlock's prompt and took the PIN. Now the processes
# say it (an sshd above sudo; proc_path is the sandbox's own /proc, its PID namespace's): the
# module steps aside and sudo asks for the Unix password as without biounlock.
in_sandbox "$ssh_lib"'
    sandbox_sshd_start password >"$SANDBOX_DIR/out/sshd-sudo.log" 2>&1 || exit 1
    talk ssh-sudo "=assword: \$" ">$2" "=\\[sudo\\] password for $1: \$" ">$2" -- env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        ssh -tt "${SANDBOX_SSH_OPTS[@]}" -o PreferredAuthentications=password "$1@127.0.0.1" "sudo -k sh -c \"echo RESULT-uid=\\\$(id -u)\""
    snap ssh-sudo-after
    sandbox_sshd_stop
' "$ALICE" "$ALICE_PW"
# shellcheck disable=SC2046
{
check "sudo in an SSH session (no logind): sudo asks pam_unix's '[sudo] password for $ALICE: ' and the Unix password runs the command" \
    eval 'rc_is ssh-sudo 0 && saw ssh-sudo "[sudo] password for $ALICE: " && saw ssh-sudo "RESULT-uid=0"' -- $(files ssh-sudo) "$(sshd_log)"
check "sudo in an SSH session (no logind): nothing of biounlock (an sshd above sudo marks the session remote)" \
    eval 'rc_is ssh-sudo 0 && lacks_re ssh-sudo "$BIOUNLOCK_WORDS_RE"' -- $(files ssh-sudo)
check "sudo in an SSH session (no logind): nothing counted, no audit row" \
    eval 'counted ssh-sudo-after 0 && no_new_rows ssh-sudo-after' -- "$out/ssh-sudo-after.status.json" "$out/ssh-sudo-after.events.json"
}

# ---------------------------------------------------------------- remote=passcode, both modes
sandbox_write_stack sshd timeout=5 require_passcode=none remote=passcode
in_sandbox "$ssh_lib"'
    sandbox_sshd_start password >"$SANDBOX_DIR/out/sshd-pp.log" 2>&1 || exit 1
    ssh_password pp-wrong "$1" "$4"
    snap pp-wrong
    ssh_password pp-wrongpin "$1" "$5"
    snap pp-wrongpin
    ssh_password pp-pin "$1" "$3"
    snap pp-pin
    ssh_password pp-wrongpin2 "$1" "$5"
    ssh_password pp-unix "$1" "$2"
    snap pp-unix
    sandbox_sshd_stop
    sandbox_sshd_start kbdint >>"$SANDBOX_DIR/out/sshd-pp.log" 2>&1 || exit 1
    ssh_kbdint kp-pin "$1" "=: \$" ">$3"
    ssh_kbdint kp-unix "$1" "=: \$" ">$2"
    ssh_kbdint kp-wrong "$1" "=: \$" ">$4"
    snap kp-after
    sandbox_sshd_stop
' "$ALICE" "$ALICE_PW" "$ALICE_PIN" "$WRONG_PW" "$WRONG_PIN"
check "sshd remote=passcode: sshd started in both modes" test $? -eq 0 -- "$out/sshd-pp.log" "$(sshd_log)"
# The ssh client puts "(user@host) " before the first line of a keyboard-interactive round;
# under remote=passcode that line is biounlock's notice, so the prompt itself is matched alone.
kp_prompt="$(prompt_reader_done "$CRED_PIN" sshd)"
# shellcheck disable=SC2046
{
check "sshd password, remote=passcode: a wrong password (letters: cannot be a PIN) is refused and not counted" \
    eval 'refused pp-wrong && counted pp-wrong 0' -- $(files pp-wrong) "$out/pp-wrong.status.json"
check "sshd password, remote=passcode: a wrong PIN is refused and counted once" \
    eval 'refused pp-wrongpin && counted pp-wrongpin 1' -- $(files pp-wrongpin) "$out/pp-wrongpin.status.json"
check "sshd password, remote=passcode: the PIN as the ssh password logs $ALICE in (and clears the count)" \
    eval 'ok_as pp-pin "$ALICE" && counted pp-pin 0' -- $(files pp-pin) "$out/pp-pin.status.json"
check "sshd password, remote=passcode: the PIN login has an audit row (success, rhost 127.0.0.1)" \
    eval '[ "$(last_event pp-pin "$ALICE" outcome)" = success ] && [ "$(last_event pp-pin "$ALICE" rhost)" = 127.0.0.1 ]' -- "$out/pp-pin.events.json"
check "sshd password, remote=passcode: the Unix password logs $ALICE in, after a wrong PIN, and its success (pam_setcred) clears the count" \
    eval 'refused pp-wrongpin2 && ok_as pp-unix "$ALICE" && counted pp-unix 0' -- $(files pp-wrongpin2 pp-unix) "$out/pp-unix.status.json"
check "sshd keyboard-interactive, remote=passcode: the first prompt is '$kp_prompt' (no finger asked), the PIN logs $ALICE in" \
    eval 'saw kp-pin "$kp_prompt" && ok_as kp-pin "$ALICE" && lacks_re kp-pin "Touch the fingerprint reader|touch the reader|then press Enter"' -- $(files kp-pin)
check "sshd keyboard-interactive, remote=passcode: the Unix password at that prompt logs $ALICE in, with no second prompt" \
    eval 'saw kp-unix "$kp_prompt" && ok_as kp-unix "$ALICE" && lacks kp-unix "$UNIX_PROMPT"' -- $(files kp-unix)
check "sshd keyboard-interactive, remote=passcode: a wrong secret is refused" refused kp-wrong -- $(files kp-wrong)
}

callers_host_after
finish
