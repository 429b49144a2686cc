#!/usr/bin/env bash
# End-to-end, issue 12: the REAL su, login and sudo on a terminal (a pty made by expect), inside the
# sandbox, with the recommended stack (the module, then pam_unix nullok try_first_pass; su has
# pam_rootok first). One prompt takes a touch, the PIN or the Unix password.
#
#   bash Tests/EndToEnd/callers-su-login.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# su is run by another user ($BOB), as people do; login by root on a fresh terminal; sudo by
# $ALICE (touch, Unix password, PIN at the one prompt).
# Covered: touch; PIN; the Unix password typed at the first prompt (no second prompt, nothing
# counted); Enter alone then pam_unix's "Password: "; wrong fingers then the PIN at the prompt the
# reader leaves; a wrong PIN (counted; pam_unix gets the text, so this su fails) then the Unix
# password; a lockout made by another user (6 wrong PINs through `su victim`): the right PIN is
# refused and not counted, the finger and the Unix password still work, and the password's
# success clears the counters. login: the same ways in, and a wrong PIN then the Unix password in
# one login session (login asks again).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"
# shellcheck source=lib/callers.bash
source "$here/lib/callers.bash"

ALICE=bcalice ALICE_UID=4321 ALICE_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=bcalice-right-index
BOB=bcbob BOB_UID=4322 BOB_PW='bob-unix-Pw-9'
WRONG_PIN=1357 WRONG_FINGER=mallory
export CONVERSE_TIMEOUT=20

for tool in su login expect; do
    command -v "$tool" >/dev/null 2>&1 || { fail "sandbox: $tool is installed (./scripts/deps)"; finish; }
done
callers_host_before
trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP
callers_setup
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_PW"
sandbox_add_user "$BOB" "$BOB_UID" "$BOB_PW"
sandbox_write_config
SANDBOX_STACK_FIRST="auth     sufficient pam_rootok.so" sandbox_write_stack su require_passcode=none
sandbox_write_stack login require_passcode=none
sandbox_write_stack sudo require_passcode=none

callers_enrol "$ALICE" "$ALICE_FINGER" "$ALICE_PIN"
check "setup: $ALICE enrols a finger, sets a PIN and enables biometric unlock" test $? -eq 0 -- "$out/enrol-$ALICE.log"

# su_as NAME USER STEP...: USER runs `su $ALICE -c ...` on a terminal (SU_TARGET: another target).
# shellcheck disable=SC2016
su_as() {
    local name=$1 user=$2; shift 2
    converse "$name" "$@" -- "${AS[@]}" "$user" su "${SU_TARGET:-$ALICE}" -c 'echo RESULT-user=$(id -un)'
}
# login_as NAME STEP...: root runs `login $ALICE` on a fresh terminal (LOGIN_USER: another user);
# the shell prints who it is. A "Login incorrect" ends the conversation at once (126) unless
# the steps expect one (they then start with "-x^").
# shellcheck disable=SC2016
login_as() {
    local name=$1; shift
    converse "$name" '-Login incorrect' "$@" '=\$ $' '>echo RESULT-login=$(id -un); exit' -- "${ROOT[@]}" login "${LOGIN_USER:-$ALICE}"
}
su_ok() { rc_is "$1" 0 && saw "$1" "RESULT-user=${2:-$ALICE}"; }
su_refused() { ! rc_is "$1" 0 && lacks "$1" "RESULT-user=" && saw "$1" "Authentication failure"; }
login_ok() { rc_is "$1" 0 && saw "$1" "RESULT-login=${2:-$ALICE}"; }
failures() { echo "$(user_field "$1" "$ALICE" passcode_failures)/$(user_field "$1" "$ALICE" biometric_failures)"; }

SU_PROMPT="$(prompt_type_or_touch "$CRED_PIN" su)"
SU_DONE="$(prompt_reader_done "$CRED_PIN" su)"
SU_LOCKED="$(prompt_type_or_touch "$CRED_PASSWORD" su)"
LOGIN_PROMPT="$(prompt_type_or_touch "$CRED_PIN" login)"
# The prompt the reader leaves, old wording or new (a loose wait; the checks are exact).
AFTER_READER='for running a command as root[^,]*: $'

# ---------------------------------------------------------------- su
SU_TARGET=$BOB su_as su-infra "$ALICE" '=: $' ">$BOB_PW"
# shellcheck disable=SC2046
check "su, infrastructure: on a pty in the sandbox, $ALICE's su to $BOB (biometric unlock not enabled) gets pam_unix's '$UNIX_PROMPT' and the Unix password" \
    eval 'su_ok su-infra "$BOB" && saw su-infra "$UNIX_PROMPT" && lacks_re su-infra "$BIOUNLOCK_WORDS_RE"' -- $(files su-infra)

su_as su-touch "$BOB" '=: $' "!$ALICE_FINGER"
# shellcheck disable=SC2046
{
check "su, touch: one prompt, '$SU_PROMPT'" saw su-touch "$SU_PROMPT" -- $(files su-touch)
check "su, touch: the enrolled finger lets $BOB's su to $ALICE in with no key pressed, and pam_unix never asked" \
    eval 'su_ok su-touch && lacks su-touch "$UNIX_PROMPT"' -- $(files su-touch)

su_as su-pin "$BOB" '=: $' ">$ALICE_PIN"
check "su, PIN: the PIN typed at '$SU_PROMPT' lets su in, pam_unix never asked" \
    eval 'saw su-pin "$SU_PROMPT" && su_ok su-pin && lacks su-pin "$UNIX_PROMPT"' -- $(files su-pin)
check "su, PIN: the PIN was not echoed" lacks su-pin "$ALICE_PIN" -- $(files su-pin)

su_as su-unix "$BOB" '=: $' ">$ALICE_PW"
store su-unix
check "su, Unix password at the first prompt: it lets su in, with no second prompt" \
    eval 'saw su-unix "$SU_PROMPT" && su_ok su-unix && lacks su-unix "$UNIX_PROMPT"' -- $(files su-unix)
check "su, Unix password at the first prompt: nothing counted" test "$(failures su-unix)" = 0/0 -- "$out/su-unix.status.json"

su_as su-enter "$BOB" '=: $' '>' '=: $' ">$ALICE_PW"
check "su, Enter alone: pam_unix asks '$UNIX_PROMPT' at once, and the Unix password lets su in" \
    eval 'saw_in_order su-enter "$SU_PROMPT" "$UNIX_PROMPT" && su_ok su-enter' -- $(files su-enter)

su_as su-fingers "$BOB" '=: $' "!$WRONG_FINGER $WRONG_FINGER $WRONG_FINGER" "=$AFTER_READER" ">$ALICE_PIN"
check "su, wrong fingers: each is reported on the terminal ('2 tries left', '1 try left')" \
    eval 'saw su-fingers "$NOT_RECOGNISED 2 tries left." && saw su-fingers "$NOT_RECOGNISED 1 try left."' -- $(files su-fingers)
check "su, wrong fingers: the prompt becomes '$SU_DONE' and the PIN typed there lets su in" \
    eval 'saw su-fingers "$SU_DONE" && su_ok su-fingers' -- $(files su-fingers)

su_as su-wrongpin "$BOB" '=: $' ">$WRONG_PIN"
store su-wrongpin
check "su, wrong PIN: this su fails (pam_unix try_first_pass got the wrong text as the password and does not ask again)" \
    eval 'su_refused su-wrongpin && lacks su-wrongpin "$UNIX_PROMPT"' -- $(files su-wrongpin)
check "su, wrong PIN: no 'Wrong passcode.' message any more" lacks su-wrongpin "Wrong passcode" -- $(files su-wrongpin)
check "su, wrong PIN: counted once" test "$(failures su-wrongpin)" = 1/0 -- "$out/su-wrongpin.status.json"
su_as su-wrongpin-unix "$BOB" '=: $' ">$ALICE_PW"
store su-wrongpin-unix
check "su, wrong PIN then the Unix password: the next su with the Unix password at the first prompt lets in" \
    su_ok su-wrongpin-unix -- $(files su-wrongpin-unix)
check "su, wrong PIN then the Unix password: the password's success (pam_setcred) cleared the count" \
    test "$(failures su-wrongpin-unix)" = 0/0 -- "$out/su-wrongpin-unix.status.json"
}

# ---------------------------------------------------------------- a lockout made by another user
# $BOB guesses $ALICE's PIN 6 times through `su $ALICE` (six terminals at once: each failure waits
# for pam_unix's delay, and the count is atomic whatever the order).
for i in 1 2 3 4 5 6; do su_as "guess-$i" "$BOB" '=: $' ">$WRONG_PIN" & done
wait
store locked
guesses_failed=1
for i in 1 2 3 4 5 6; do su_refused "guess-$i" || guesses_failed=0; done
# shellcheck disable=SC2046
{
check "lockout: 6 wrong PINs typed by $BOB at 'su $ALICE' all fail" test "$guesses_failed" = 1 -- $(files guess-1 guess-6)
check "lockout: $ALICE's PIN is locked (passcode_lockout.locked, at least 5 counted)" \
    eval '[ "$(user_field locked "$ALICE" passcode_lockout.locked)" = true ] && [ "$(user_field locked "$ALICE" passcode_failures)" -ge 5 ]' \
    -- "$out/locked.status.json"

su_as lock-pin "$BOB" '=: $' ">$ALICE_PIN"
store lock-pin
check "lockout: su says once '$PIN_LOCKED_RE' and asks '$SU_LOCKED'" \
    eval 'saw_re lock-pin "$PIN_LOCKED_RE" && saw lock-pin "$SU_LOCKED"' -- $(files lock-pin)
check "lockout: the right PIN is refused while the lockout runs" su_refused lock-pin -- $(files lock-pin)
check "lockout: the refused PIN was not counted (no Argon2id while locked)" \
    test "$(user_field lock-pin "$ALICE" passcode_failures)" = "$(user_field locked "$ALICE" passcode_failures)" -- "$out/lock-pin.status.json"

su_as lock-touch "$BOB" '=: $' "!$ALICE_FINGER"
check "lockout: $ALICE's finger still works" su_ok lock-touch -- $(files lock-touch)

su_as lock-unix "$BOB" '=: $' ">$ALICE_PW"
store lock-unix
check "lockout: $ALICE's Unix password typed at the first prompt still works" su_ok lock-unix -- $(files lock-unix)
check "lockout: the Unix password's success cleared the counters and the lockout" \
    eval '[ "$(failures lock-unix)" = 0/0 ] && [ "$(user_field lock-unix "$ALICE" passcode_lockout.locked)" = false ]' -- "$out/lock-unix.status.json"
}

# ---------------------------------------------------------------- sudo on a terminal
# shellcheck disable=SC2016
sudo_as() { local name=$1; shift; converse "$name" "$@" -- "${AS[@]}" "$ALICE" sudo -k sh -c 'echo RESULT-uid=$(id -u)'; }
sudo_ok() { rc_is "$1" 0 && saw "$1" "RESULT-uid=0"; }
SUDO_PROMPT="$(prompt_type_or_touch "$CRED_PIN" sudo)"
sudo_as sudo-touch '=: $' "!$ALICE_FINGER"
sudo_as sudo-unix '=: $' ">$ALICE_PW"
sudo_as sudo-pin '=: $' ">$ALICE_PIN"
# shellcheck disable=SC2046
{
check "sudo on a terminal: '$SUDO_PROMPT', and a touch runs the command" \
    eval 'saw sudo-touch "$SUDO_PROMPT" && sudo_ok sudo-touch && lacks sudo-touch "[sudo] password for"' -- $(files sudo-touch)
check "sudo on a terminal: the Unix password typed at that prompt runs the command, with no second prompt" \
    eval 'saw sudo-unix "$SUDO_PROMPT" && sudo_ok sudo-unix && lacks sudo-unix "[sudo] password for"' -- $(files sudo-unix)
check "sudo on a terminal: the PIN typed at that prompt runs the command" \
    eval 'saw sudo-pin "$SUDO_PROMPT" && sudo_ok sudo-pin' -- $(files sudo-pin)
}

# ---------------------------------------------------------------- sudo and su in a tmux pane
# tmux (issue 33, item 5): a pane is a terminal (its pty), in the environment the pane was
# started with. A tmux server started in a local session gives its panes no SSH_* variables:
# sudo there shows the one prompt, and a touch runs the command. A server started from an SSH
# login keeps SSH_CONNECTION in the panes it made then, also once attached at the machine itself
# (tmux refreshes it only for panes made after an attach): su, which keeps the environment, makes
# biounlock take the session as remote and step aside -- pam_unix's prompt, the Unix password.
# sudo does not: with env_reset, sudoers answers a module's getenv() from the command's reset
# environment (sudo-project/sudo#318), so the stale SSH_CONNECTION is not seen there, and only
# the logind session (the audit session tmux's server was started in, which the sandbox has
# none of) can mark it remote: checked below as what it is. The pane is detached (send-keys
# types into it) and read with capture-pane.
# tmux_run NAME HOW USER CMD SECRET [ENV=VALUE...]: USER starts a tmux server whose pane runs
# CMD; at the first prompt HOW is "touch" (ALICE's finger) or "type" (SECRET, then Enter).
# Leaves out/NAME.txt (the pane) and out/NAME.rc (0 once the pane shows "RESULT-").
tmux_run() {
    in_sandbox '
        name=$1 how=$2 user=$3 cmd=$4 secret=$5 finger=$6; shift 6
        sock=/tmp/biounlock-tmux-$name o="$SANDBOX_DIR/out/$name"
        t() { sandbox_as "$user" tmux -S "$sock" "$@"; }
        pane_has() { local i=0; while [ $i -lt 200 ]; do t capture-pane -p -t x -S -100 | grep -q -- "$1" && return 0; sleep 0.1; i=$((i + 1)); done; return 1; }
        echo 1 >"$o.rc"
        SANDBOX_CMD_TIMEOUT=5 sandbox_as "$user" env "$@" tmux -S "$sock" -f /dev/null new-session -d -s x -x 160 -y 40 "$cmd; sleep 60"
        if pane_has ": *\$"; then
            case $how in
                touch) sandbox_touch "$finger" >"$o.touch" 2>&1 ;;
                type) t send-keys -t x -l "$secret" && t send-keys -t x Enter ;;
            esac
            pane_has "RESULT-" && echo 0 >"$o.rc"
        fi
        t capture-pane -p -N -t x -S -100 >"$o.txt" 2>&1
        t kill-server 2>/dev/null
        :' "$@"
}
if command -v tmux >/dev/null 2>&1; then
    STALE_SSH="SSH_CONNECTION=203.0.113.9 50022 192.0.2.1 22"
    # shellcheck disable=SC2016
    {
    tmux_run tmux-sudo touch "$ALICE" "sudo -k sh -c 'echo RESULT-uid=\$(id -u)'" - "$ALICE_FINGER"
    tmux_run tmux-su-ssh type "$BOB" "su $ALICE -c 'echo RESULT-user=\$(id -un)'" "$ALICE_PW" - "$STALE_SSH"
    tmux_run tmux-sudo-ssh type "$ALICE" "sudo -k sh -c 'echo RESULT-uid=\$(id -u)'" "$ALICE_PIN" - "$STALE_SSH"
    }
    # shellcheck disable=SC2046
    {
    check "tmux: sudo in a pane of a server started locally: '$SUDO_PROMPT', and a touch runs the command" \
        eval 'rc_is tmux-sudo 0 && saw tmux-sudo "$SUDO_PROMPT" && saw tmux-sudo "RESULT-uid=0" && lacks tmux-sudo "[sudo] password for"' -- "$out/tmux-sudo.txt" "$out/tmux-sudo.rc"
    check "tmux: su in a pane started from an SSH login (SSH_CONNECTION kept): nothing of biounlock, pam_unix's '$UNIX_PROMPT', and the Unix password" \
        eval 'rc_is tmux-su-ssh 0 && saw tmux-su-ssh "$UNIX_PROMPT" && saw tmux-su-ssh "RESULT-user=$ALICE" && lacks_re tmux-su-ssh "$BIOUNLOCK_WORDS_RE"' -- "$out/tmux-su-ssh.txt" "$out/tmux-su-ssh.rc"
    check "tmux: sudo in such a pane does not see SSH_CONNECTION (env_reset): biounlock's prompt, and the PIN runs the command (only logind can mark that session remote)" \
        eval 'rc_is tmux-sudo-ssh 0 && saw tmux-sudo-ssh "$SUDO_PROMPT" && saw tmux-sudo-ssh "RESULT-uid=0"' -- "$out/tmux-sudo-ssh.txt" "$out/tmux-sudo-ssh.rc"
    }
else
    fail "sandbox: tmux is installed (./scripts/deps)"
fi

# ---------------------------------------------------------------- sudo and su in a GNU screen window
# screen (issue 33, item 5): the same as tmux. A window is a terminal (its pty) in the environment
# screen was started with; screen has no update-environment at all, so a session started from an
# SSH login keeps SSH_CONNECTION in every window, whoever attaches later and from where. su there
# keeps it: biounlock takes the session as remote and steps aside (pam_unix's prompt). sudo
# (env_reset) does not see it: biounlock's prompt, as in tmux. The session is detached (-dm);
# `-X stuff` types into its window and `-X hardcopy` reads it. SCREENDIR: a 0700 directory of the
# user's own (screen refuses any other), gone at the end. (hardcopy drops the blanks at a line's
# end: the prompts are looked for without their last space.)
# screen_run NAME HOW USER CMD SECRET [ENV=VALUE...]: as tmux_run.
screen_run() {
    in_sandbox '
        name=$1 how=$2 user=$3 cmd=$4 secret=$5 finger=$6; shift 6
        o="$SANDBOX_DIR/out/$name"
        dir=$(mktemp -d /tmp/biounlock-screen.XXXXXX) && chown "$user" "$dir" && chmod 0700 "$dir" || exit 1
        s() { sandbox_as "$user" env SCREENDIR="$dir" screen -S x "$@"; }
        window_has() {
            local i=0
            while [ $i -lt 200 ]; do
                s -p 0 -X hardcopy -h "$dir/window" && grep -q -- "$1" "$dir/window" 2>/dev/null && return 0
                sleep 0.1; i=$((i + 1))
            done
            return 1
        }
        echo 1 >"$o.rc"
        SANDBOX_CMD_TIMEOUT=5 sandbox_as "$user" env SCREENDIR="$dir" "$@" screen -c /dev/null -dmS x sh -c "$cmd; sleep 60"
        if window_has ": *\$"; then
            case $how in
                touch) sandbox_touch "$finger" >"$o.touch" 2>&1 ;;
                type) s -p 0 -X stuff "$secret"$'"'"'\r'"'"' ;;
            esac
            window_has "RESULT-" && echo 0 >"$o.rc"
        fi
        s -p 0 -X hardcopy -h "$dir/window"; cp "$dir/window" "$o.txt" 2>/dev/null
        s -X quit 2>/dev/null
        rm -rf -- "$dir"
        :' "$@"
}
if command -v screen >/dev/null 2>&1; then
    STALE_SSH="SSH_CONNECTION=203.0.113.9 50022 192.0.2.1 22"
    # shellcheck disable=SC2016
    {
    screen_run screen-sudo touch "$ALICE" "sudo -k sh -c 'echo RESULT-uid=\$(id -u)'" - "$ALICE_FINGER"
    screen_run screen-su-ssh type "$BOB" "su $ALICE -c 'echo RESULT-user=\$(id -un)'" "$ALICE_PW" - "$STALE_SSH"
    screen_run screen-sudo-ssh type "$ALICE" "sudo -k sh -c 'echo RESULT-uid=\$(id -u)'" "$ALICE_PIN" - "$STALE_SSH"
    }
    check "screen: sudo in a window of a session started locally: '$SUDO_PROMPT', and a touch runs the command" \
        eval 'rc_is screen-sudo 0 && saw screen-sudo "${SUDO_PROMPT% }" && saw screen-sudo "RESULT-uid=0" && lacks screen-sudo "[sudo] password for"' -- "$out/screen-sudo.txt" "$out/screen-sudo.rc"
    check "screen: su in a window of a session started from an SSH login (SSH_CONNECTION kept): nothing of biounlock, pam_unix's '$UNIX_PROMPT', and the Unix password" \
        eval 'rc_is screen-su-ssh 0 && saw screen-su-ssh "${UNIX_PROMPT% }" && saw screen-su-ssh "RESULT-user=$ALICE" && lacks_re screen-su-ssh "$BIOUNLOCK_WORDS_RE"' -- "$out/screen-su-ssh.txt" "$out/screen-su-ssh.rc"
    check "screen: sudo in such a window does not see SSH_CONNECTION (env_reset): biounlock's prompt, and the PIN runs the command (only logind can mark that session remote)" \
        eval 'rc_is screen-sudo-ssh 0 && saw screen-sudo-ssh "${SUDO_PROMPT% }" && saw screen-sudo-ssh "RESULT-uid=0"' -- "$out/screen-sudo-ssh.txt" "$out/screen-sudo-ssh.rc"
else
    fail "sandbox: screen is installed (./scripts/deps)"
fi

# ---------------------------------------------------------------- login
LOGIN_USER=$BOB login_as login-infra '=: $' ">$BOB_PW"
login_as login-touch '=: $' "!$ALICE_FINGER"
# shellcheck disable=SC2046
{
check "login, infrastructure: the real login on a pty in the sandbox: $BOB (not enabled) gets '$UNIX_PROMPT', the Unix password starts his shell" \
    eval 'login_ok login-infra "$BOB" && saw login-infra "$UNIX_PROMPT" && lacks_re login-infra "$BIOUNLOCK_WORDS_RE"' -- $(files login-infra)
check "login, touch: '$LOGIN_PROMPT' and a touch start $ALICE's shell, pam_unix never asked" \
    eval 'saw login-touch "$LOGIN_PROMPT" && login_ok login-touch && lacks login-touch "$UNIX_PROMPT"' -- $(files login-touch)
login_as login-pin '=: $' ">$ALICE_PIN"
check "login, PIN: the PIN typed at the first prompt starts the shell" \
    eval 'saw login-pin "$LOGIN_PROMPT" && login_ok login-pin && lacks login-pin "$UNIX_PROMPT"' -- $(files login-pin)
login_as login-unix '=: $' ">$ALICE_PW"
check "login, Unix password at the first prompt: it starts the shell, with no second prompt" \
    eval 'saw login-unix "$LOGIN_PROMPT" && login_ok login-unix && lacks login-unix "$UNIX_PROMPT"' -- $(files login-unix)
login_as login-wrong '-x^' '=: $' ">$WRONG_PIN" '=login: $' ">$ALICE" '-Login incorrect' '=: $' ">$ALICE_PW"
check "login, wrong PIN then the Unix password: 'Login incorrect', login asks again, and the Unix password starts the shell" \
    eval 'saw_in_order login-wrong "Login incorrect" "$LOGIN_PROMPT" && login_ok login-wrong' -- $(files login-wrong)
}
store end
check "the store: $ALICE's counters are 0 after the Unix password's success at login" test "$(failures end)" = 0/0 -- "$out/end.status.json"

callers_host_after
finish
