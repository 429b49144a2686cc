#!/usr/bin/env bash
# End-to-end: type or touch. The REAL sudo on a real terminal (a pty made by expect) inside the
# mount-namespace sandbox (scripts/lib/sandbox.sh): one prompt takes a touch or a typed PIN.
#
#   bash Tests/EndToEnd/type-or-touch.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# Shows: a touch with no key pressed succeeds; the PIN typed while the reader waits succeeds;
# a half-typed PIN followed by a touch leaves nothing behind for the next program, which gets
# exactly its own keystrokes; Enter alone goes to the Unix password at once; wrong fingers are
# reported on the same prompt; Ctrl-C ends sudo and leaves the terminal sane.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=../../scripts/lib/sandbox.sh
source "$repo/scripts/lib/sandbox.sh"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"

ALICE=bitalice ALICE_UID=4252 ALICE_UNIX_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=alice-right-index
PROMPT='PIN or password for running a command as root, or touch the reader: '

trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP
if ! sandbox_create; then fail "sandbox: set up"; finish; fi
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_UNIX_PW"
# The passcode-required rules have their own tests; here every sudo may use the finger.
SANDBOX_MODULE_ARGS="require_passcode=none" sandbox_write_config
out="$SANDBOX_DIR/out"
mkdir -m 0700 "$out"

# The terminal side: expect drives a pty. Args: MODE PIN UNIX-PASSWORD TOUCH-CMD CMD...
cat >"$SANDBOX_DIR/run/tt.exp" <<'EXP'
# (An expect block must span lines: on one line, expect takes the braces as a single pattern.)
set timeout 30
if {[info exists env(TT_DEBUG)]} { exp_internal 1 }
log_user 1
lassign $argv mode pin unixpw touch
set cmd [lrange $argv 4 end]
proc await {pattern} {
    expect {
        -re $pattern {}
        timeout { puts "\nEXPECT: timed out waiting for /$pattern/"; exit 124 }
        eof { puts "\nEXPECT: ended while waiting for /$pattern/"; exit 125 }
    }
}
spawn -noecho {*}$cmd
await {or touch the reader: $}
switch $mode {
    touch {
        exec {*}$touch
    }
    type {
        sleep 0.2
        send -- "$pin\r"
    }
    partial {
        send -- [string range $pin 0 1]
        sleep 0.3
        exec {*}$touch
        await {\n0\r?\n}
        send -- "hello\r"
    }
    enter {
        send -- "\r"
        await {password for [^\r\n]*: $}
        send -- "$unixpw\r"
    }
    wrong {
        exec {*}$touch
        await {Fingerprint not recognised\.\r?\n}
        send -- "$pin\r"
    }
    habit {
        sleep 0.2
        send -- "$unixpw\r"
    }
    wrongpin {
        sleep 0.2
        send -- "0000\r"
        await {incorrect password attempt}
        await {or touch the reader: $}
        send -- "$unixpw\r"
    }
    ctrlc {
        sleep 0.2
        send -- "\x03"
    }
}
expect {
    eof {}
    timeout { puts "\nEXPECT: no end"; exit 124 }
}
lassign [wait] pid spawn_id os_error status
exit $status
EXP

# scenario NAME MODE TOUCH-IDS SHELL-CMD: runs SHELL-CMD as alice on a pty; the touch command
# (one `sim scan` per id) is what expect runs at the moment the scenario calls for.
scenario() {
    local name=$1 mode=$2 ids=$3 cmd=$4
    sandbox_run '
        name=$1 mode=$2 ids=$3 cmd=$4
        touch="$SANDBOX_BUILD/biounlock --sim-socket $SANDBOX_SOCK sim scan"
        tcl_touch="bash -c {for i in $ids; do $touch \$i || exit 1; done}"
        export TT_CMD=$cmd TT_USER=$7
        SANDBOX_AS_TTY=1 expect -f "$SANDBOX_DIR/run/tt.exp" "$mode" "$5" "$6" "$tcl_touch" \
            bash -c "source \"\$SANDBOX_LIB\"; SANDBOX_AS_TTY=1 sandbox_as \"\$TT_USER\" bash -c \"\$TT_CMD\"" \
            >"$SANDBOX_DIR/out/$name.log" 2>&1
        echo $? >"$SANDBOX_DIR/out/$name.rc"
    ' "$name" "$mode" "$ids" "$cmd" "$ALICE_PIN" "$ALICE_UNIX_PW" "$ALICE"
    tr -d '\r' <"$out/$name.log" >"$out/$name.txt"
}
rc_is() { [ "$(cat "$out/$1.rc" 2>/dev/null)" = "$2" ]; }
has() { grep -qF -- "$2" "$out/$1.txt"; }
lacks() { ! grep -qF -- "$2" "$out/$1.txt"; }

# ---- setup ----
sandbox_run '
    { sandbox_enrol "$1" "$2" right-index && printf "%s\n" "$3" | bio passcode set "$1" --stdin &&
      bio --sensor simulated enable "$1"; } >"$4/setup.log" 2>&1
' "$ALICE" "$ALICE_FINGER" "$ALICE_PIN" "$out"
check "setup: $ALICE enrols, sets a PIN, enables biometric unlock" test $? -eq 0 -- "$out/setup.log"

# ---- a touch, no key pressed ----
scenario touch touch "$ALICE_FINGER" 'sudo -k id -u'
check "touch: one prompt, '$PROMPT'" has touch "$PROMPT" -- "$out/touch.txt"
check "touch: sudo ran the command with no key pressed" eval 'rc_is touch 0 && grep -qx 0 "$out/touch.txt"' -- "$out/touch.txt"
check "touch: no other prompt" eval 'lacks touch "password for $ALICE" && lacks touch "Touch the fingerprint reader to"' -- "$out/touch.txt"

# ---- the PIN typed while the reader waits ----
scenario type type "" 'sudo -k id -u'
check "type: the PIN typed at the same prompt lets sudo run the command" eval 'rc_is type 0 && grep -qx 0 "$out/type.txt"' -- "$out/type.txt"
check "type: the PIN was not echoed" lacks type "$ALICE_PIN" -- "$out/type.txt"

# ---- half a PIN, then a touch: the next program gets exactly its own keystrokes ----
scenario partial partial "$ALICE_FINGER" 'sudo -k id -u; IFS= read -r line; echo "GOT[$line]"'
check "partial: the touch won although two digits were typed" eval 'rc_is partial 0 && grep -qx 0 "$out/partial.txt"' -- "$out/partial.txt"
check "partial: the next command read exactly 'hello' (nothing of the PIN)" has partial "GOT[hello]" -- "$out/partial.txt"

# ---- Enter alone: straight to the Unix password ----
scenario enter enter "" 'sudo -k id -u'
check "enter: Enter alone brought pam_unix's password prompt at once" has enter "password for $ALICE:" -- "$out/enter.txt"
check "enter: the Unix password then let sudo run the command" eval 'rc_is enter 0 && grep -qx 0 "$out/enter.txt"' -- "$out/enter.txt"

# ---- wrong fingers, reported on the same prompt, then the PIN ----
scenario wrong wrong "mallory mallory mallory" 'sudo -k id -u'
check "wrong: each wrong finger is reported ('2 tries left', '1 try left')" \
    eval 'has wrong "Fingerprint not recognised. 2 tries left." && has wrong "Fingerprint not recognised. 1 try left."' -- "$out/wrong.txt"
check "wrong: the PIN typed afterwards at the same prompt succeeds" eval 'rc_is wrong 0 && grep -qx 0 "$out/wrong.txt"' -- "$out/wrong.txt"

# ---- the Unix password typed by habit at the same prompt ----
scenario habit habit "" 'sudo -k id -u'
check "habit: the Unix password typed at biounlock's prompt lets sudo run the command" \
    eval 'rc_is habit 0 && grep -qx 0 "$out/habit.txt"' -- "$out/habit.txt"
check "habit: typed once (pam_unix took it from biounlock: no 'password for' prompt)" lacks habit "password for $ALICE:" -- "$out/habit.txt"

# ---- a wrong PIN (handed on: pam_unix refuses it), then the Unix password at the next attempt ----
scenario wrongpin wrongpin "" 'sudo -k id -u; sudo -k id -u'
check "wrong PIN: no 'Wrong passcode' from biounlock, and no second prompt in the same attempt" \
    eval 'lacks wrongpin "Wrong passcode" && lacks wrongpin "password for $ALICE:"' -- "$out/wrongpin.txt"
check "wrong PIN: the Unix password at the next attempt's prompt lets sudo run the command" \
    eval 'rc_is wrongpin 0 && grep -qx 0 "$out/wrongpin.txt"' -- "$out/wrongpin.txt"

# ---- Ctrl-C: sudo ends, the terminal is sane ----
scenario ctrlc ctrlc "" 'sudo -k id -u; echo "rc=$?"; stty -a'
check "ctrl-c: sudo did not run the command" eval '! grep -qx 0 "$out/ctrlc.txt"' -- "$out/ctrlc.txt"
check "ctrl-c: echo, line editing and signals are back on afterwards" \
    eval 'grep -Eq "(^| )echo( |$)" "$out/ctrlc.txt" && grep -Eq "(^| )icanon( |$)" "$out/ctrlc.txt" && grep -Eq "(^| )isig( |$)" "$out/ctrlc.txt"' -- "$out/ctrlc.txt"

finish
