#!/usr/bin/env bash
# End-to-end: real screen lockers against build/pam_biounlock.so, in the mount-namespace sandbox
# (scripts/lib/sandbox.sh) with a sandbox user whose Unix password, PIN and finger are known.
#
#   bash Tests/EndToEnd/lockers.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# - i3lock under Xvfb, driven with xdotool: it runs PAM as the user, so the module goes through
#   a setuid-root copy of build/biounlock-check. Enter then a touch of the simulated reader
#   unlocks; so do the PIN and the Unix password typed; a wrong PIN leaves it locked, and the
#   Unix password then unlocks.
# - xscreensaver under the same Xvfb: its setuid auth helper drops to the user before
#   pam_start, so it goes through the checker too; PIN, Unix password, Enter then a touch; then
#   once more in zh_CN.UTF-8, where the checker's texts are Chinese (the module relays the
#   locale; the checker's config names the catalogs).
# - xsecurelock as Debian ships it (no pam.d file: pam_start("common-auth"), pam-auth-update's
#   common-auth with biounlock, Debian's `other`), under the same Xvfb: its authproto_pam runs as
#   the user, through the checker; a touch at the touch request, the Unix password typed at once,
#   the PIN at the prompt, and a wrong PIN then the password unlock it as they should.
# - vlock on a terminal (expect): it is setuid root, so the module decides in-process (no
#   checker); a touch and the PIN at its type-or-touch prompt.
# - GNU screen's lock (screen -X lockscreen, as C-a x does it) on a terminal, as Debian ships it
#   (no pam.d file: `screen` falls to Debian's `other`, so common-auth): it reads "Password:"
#   itself, then runs PAM as the user (through the checker) and answers every prompt with what
#   was typed; the PIN, the Unix password, Enter then a touch, a wrong finger then the right one,
#   and a wrong PIN then the password.
# Then the audit log holds exactly the rows a root caller would have left.
#
# The checker copy lives in a root-owned 0755 temp dir under .build/ (the module refuses one in
# /tmp, which others can write) and goes with it at exit; Xvfb runs in a network and PID
# namespace of its own (x-session.sh), so no display number or X socket is shared and nothing
# it started outlives the test. Prints "ok - ..." lines and "N passed, N failed".
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=../../scripts/lib/sandbox.sh
source "$repo/scripts/lib/sandbox.sh"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"

# (No capital in the password: xdotool types capitals by remapping a key, which xscreensaver's
# dialog can read before the remap lands.)
USER_=bilocker USER_UID=4262 UNIX_PW='locker-unix-pw-5' PIN=5813 FINGER=bilocker-right-index WRONG_PIN=1357

helpers=""
cleanup() { sandbox_destroy; [ -n "$helpers" ] && rm -rf -- "$helpers"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
for tool in Xvfb xdotool i3lock xscreensaver xsecurelock strace vlock expect screen; do
    command -v "$tool" >/dev/null 2>&1 || { fail "tool '$tool' is installed (run ./scripts/deps)"; finish; }
done
[ -x "$BUILD_DIR/biounlock-check" ] || { fail "a build with biounlock-check in $BUILD_DIR (run ./scripts/build)"; finish; }
if ! sandbox_create; then fail "sandbox: set up"; finish; fi
sandbox_add_user "$USER_" "$USER_UID" "$UNIX_PW"
sandbox_write_config
out="$SANDBOX_DIR/out"
mkdir -m 0700 "$out"

# The setuid checker, where the module trusts it: root-owned, and so is every directory up to /.
mkdir -p "$repo/.build/test-helpers" && chmod 0755 "$repo/.build" "$repo/.build/test-helpers"
helpers="$(mktemp -d "$repo/.build/test-helpers/lockers.XXXXXX")" && chmod 0755 "$helpers"
install -m 4755 -o root -g root "$BUILD_DIR/biounlock-check" "$helpers/biounlock-check"
# xsecurelock's auth_x11 under strace (XSECURELOCK_AUTH: a name that starts with auth_), so that the
# texts authproto_pam sends it -- what the user sees -- are in the log: its reads of plain text
# from any descriptor but 0 (the keys), one line each, to its standard error.
cat >"$helpers/auth_traced" <<'SH'
#!/bin/sh
exec strace -qq -e trace=read -s 400 \
    -o '|grep --line-buffered -E "^read\([1-9][0-9]*, \"[^\\]*\", [0-9]+\) += [0-9]+$" >&2' \
    /usr/libexec/xsecurelock/auth_x11 "$@"
SH
chmod 0755 "$helpers/auth_traced"

# The root-owned config the checker reads (bound over /etc/security inside the sandbox), and
# each locker's pam.d file.
mkdir -m 0755 "$SANDBOX_DIR/etc-security" "$SANDBOX_DIR/home"
chown "$USER_UID:$USER_UID" "$SANDBOX_DIR/home"
cat >"$SANDBOX_DIR/etc-security/biounlock.conf" <<EOF
db = $SANDBOX_DB
sensor = simulated
sim_socket = $SANDBOX_SOCK
timeout = 15
require_passcode = none
locale_dir = $BUILD_DIR/locale
proc_path = $SANDBOX_DIR/proc
EOF
chmod 0644 "$SANDBOX_DIR/etc-security/biounlock.conf"
stack() { # ARGS: the recommended auth lines with these module arguments (vlock: no example)
    cat <<EOF
#%PAM-1.0
auth    [success=done ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die] $BUILD_DIR/pam_biounlock.so check_helper=$helpers/biounlock-check $*
auth    [success=1 default=ignore] pam_unix.so nullok try_first_pass
auth    requisite   pam_deny.so
auth    required    pam_permit.so
account required    pam_unix.so
EOF
}
# i3lock's and xscreensaver's files are the shipped examples (pam.d/), with the built module and
# this checker copy put in; xscreensaver's gets touch_first=5 rather than the default 2 (the
# touch must come while the touch request is up, and this machine may be busy).
from_example() { # NAME [EXTRA ARGS]
    sed "s|pam_biounlock\.so|$BUILD_DIR/pam_biounlock.so check_helper=$helpers/biounlock-check ${2:-}|" "$repo/pam.d/$1" \
        >"$SANDBOX_DIR/etc/pam.d/$1"
}
from_example i3lock
from_example xscreensaver touch_first=5
cp /etc/pam.d/common-account "$SANDBOX_DIR/etc/pam.d/common-account"   # xscreensaver's @include
# i3lock as Debian ships it (the last X scenarios put these in place): its file and Debian's login
# from Tests/Fixtures/debian-pam.d, unedited, and the common-auth Debian's real pam-auth-update
# writes with biounlock's profile, with the built module and this checker copy put in.
mkdir -p "$SANDBOX_DIR/debian-pam.d" "$SANDBOX_DIR/layout"
cp "$repo/Tests/Fixtures/debian-pam.d/i3lock" "$repo/Tests/Fixtures/debian-pam.d/login" "$repo/Tests/Fixtures/debian-pam.d/other" \
    "$SANDBOX_DIR/debian-pam.d/"
sh "$here/lib/pam-auth-update-layout.sh" "$SANDBOX_DIR/layout" "$repo/packaging/pam-configs/biounlock" >"$out/layout.log" 2>&1
sed "s|pam_biounlock\.so|$BUILD_DIR/pam_biounlock.so check_helper=$helpers/biounlock-check|" "$SANDBOX_DIR/layout/common-auth" \
    >"$SANDBOX_DIR/debian-pam.d/common-auth"
# Debian's `other` includes all four (xsecurelock's account group comes from it).
cp "$SANDBOX_DIR/layout/common-account" "$SANDBOX_DIR/layout/common-password" "$SANDBOX_DIR/layout/common-session" \
    "$SANDBOX_DIR/debian-pam.d/"
chmod 0644 "$SANDBOX_DIR/debian-pam.d/"*
stack >"$SANDBOX_DIR/etc/pam.d/vlock"
chmod 0644 "$SANDBOX_DIR/etc/pam.d/"*

# ---- setup ----
sandbox_run '
    mount --bind "$SANDBOX_DIR/etc-security" /etc/security || exit 1
    { sandbox_enrol "$1" "$2" right-index && printf "%s\n" "$3" | bio passcode set "$1" --stdin && bio enable "$1"; } \
        >"$SANDBOX_DIR/out/setup.log" 2>&1
' "$USER_" "$FINGER" "$PIN"
check "setup: $USER_ enrols, sets a PIN, enables biometric unlock" test $? -eq 0 -- "$out/setup.log"

# ---- i3lock and xscreensaver, under Xvfb ----
cp "$here/lockers/x-session.sh" "$SANDBOX_DIR/run/x-session.sh"
sandbox_run '
    mount --bind "$SANDBOX_DIR/etc-security" /etc/security || exit 1
    LOCKERS_DEBUG=${LOCKERS_DEBUG:-} timeout -k 5 240 unshare --net --pid --fork --mount-proc bash -c "source \"\$SANDBOX_LIB\"; source \"\$SANDBOX_DIR/run/x-session.sh\" \"\$@\"" \
        x-session "$@" >"$SANDBOX_DIR/out/x-session.log" 2>&1
' "$USER_" "$USER_UID" "$UNIX_PW" "$PIN" "$FINGER" "$helpers/auth_traced"
result() { [ "$(cat "$out/$1.result" 2>/dev/null)" = "$2" ]; }
logs=("$out/x-session.log" "$out/xvfb.log" "$out/i3lock.log" "$out/touch.log")
check "X: Xvfb started in a namespace of its own (-displayfd)" result setup ok -- "${logs[@]}"
check "i3lock: Enter, then a touch of the reader, unlocks (through biounlock-check)" result i3lock-touch unlocked -- "${logs[@]}"
check "i3lock: the PIN typed unlocks" result i3lock-pin unlocked -- "${logs[@]}"
check "i3lock: the Unix password typed unlocks (handed on to pam_unix)" result i3lock-password unlocked -- "${logs[@]}"
check "i3lock: a wrong PIN leaves the screen locked" result i3lock-wrong locked -- "${logs[@]}"
check "i3lock: ... and the Unix password then unlocks" result i3lock-wrong-then-password unlocked -- "${logs[@]}"
check "Debian's i3lock file (auth include login, common-auth from pam-auth-update): Enter, then a touch, unlocks" \
    result debian-i3lock-touch unlocked -- "${logs[@]}" "$out/layout.log" "$SANDBOX_DIR/debian-pam.d/common-auth"
check "Debian's i3lock file: the PIN typed unlocks" result debian-i3lock-pin unlocked -- "${logs[@]}"
check "Debian's i3lock file: the Unix password typed unlocks" result debian-i3lock-password unlocked -- "${logs[@]}"
xlogs=("$out/x-session.log" "$out/xscreensaver.log" "$out/touch.log")
check "xscreensaver: Enter on the touch request, then the PIN typed at the prompt, unlocks (auth helper as the user, through the checker)" \
    result xscreensaver-pin unlocked -- "${xlogs[@]}"
check "xscreensaver: ... and so does the Unix password" result xscreensaver-password unlocked -- "${xlogs[@]}"
check "xscreensaver: a touch while the touch request is shown, then Enter, unlocks" result xscreensaver-touch unlocked -- "${xlogs[@]}"
check "xscreensaver: its dialog showed biounlock's touch request, then its prompt" \
    eval 'grep -q "TEXT_INFO=\"Touch the fingerprint reader to authenticate for unlocking the screen\"" "$out/xscreensaver.log" &&
          grep -q "ECHO_OFF=\"PIN or password for unlocking the screen, or touch the reader, then press Enter: \"" "$out/xscreensaver.log"' -- "$out/xscreensaver.log"
check "xscreensaver in zh_CN.UTF-8: the checker's touch request and prompt in Chinese, and the PIN unlocks" \
    eval 'result xscreensaver-zh-pin unlocked &&
          grep -q "TEXT_INFO=\"请触摸指纹读取器以进行 解锁屏幕 认证\"" "$out/xscreensaver-zh.log" &&
          grep -q "ECHO_OFF=\"PIN 码或密码（解锁屏幕），或触摸指纹读取器后按回车键：\"" "$out/xscreensaver-zh.log"' \
    -- "$out/x-session.log" "$out/xscreensaver-zh.log"
xsl=("$out/x-session.log" "$out/xsecurelock.log" "$out/touch.log")
check "xsecurelock (Debian's: pam_start(\"common-auth\"), pam-auth-update's common-auth): a touch at the touch request unlocks (authproto_pam as the user, through the checker)" \
    result xsecurelock-touch unlocked -- "${xsl[@]}" "$SANDBOX_DIR/debian-pam.d/common-auth"
check "xsecurelock: the Unix password typed at once (during the touch request) unlocks" result xsecurelock-password unlocked -- "${xsl[@]}"
check "xsecurelock: the PIN typed at the prompt unlocks" result xsecurelock-pin unlocked -- "${xsl[@]}"
check "xsecurelock: a wrong PIN leaves the screen locked (it runs the stack again)" result xsecurelock-wrong locked -- "${xsl[@]}"
check "xsecurelock: ... and the Unix password then unlocks" result xsecurelock-wrong-then-password unlocked -- "${xsl[@]}"
check "xsecurelock: it showed biounlock's touch request, then its prompt, in words (unlocking the screen, not common-auth)" \
    eval 'grep -q "\"Touch the fingerprint reader to authenticate for unlocking the screen\"" "$out/xsecurelock.log" &&
          grep -q "\"PIN or password for unlocking the screen, or touch the reader, then press Enter: \"" "$out/xsecurelock.log"' -- "$out/xsecurelock.log"

# ---- terminal lockers (vlock, GNU screen): one conversation each, step by step (expect) ----
# terminal.exp TOUCH STEPS COMMAND...: runs COMMAND on a pty and takes STEPS (a Tcl list) in
# turn: =REGEX waits for it, >TEXT types TEXT and Enter (">": Enter alone), !ID touches the
# reader with finger ID (TOUCH ID), wSECONDS waits; then waits for COMMAND's end, its status the
# exit status (124: a step or the end did not come in 30 s, 125: COMMAND ended first).
cat >"$SANDBOX_DIR/run/terminal.exp" <<'EXP'
set timeout 30
lassign $argv touch steps
spawn -noecho {*}[lrange $argv 2 end]
proc await {pattern} {
    expect {
        -re $pattern {}
        timeout { puts "\nEXPECT: timed out waiting for /$pattern/"; exit 124 }
        eof { puts "\nEXPECT: ended while waiting for /$pattern/"; exit 125 }
    }
}
foreach step $steps {
    switch -glob -- $step {
        =* { await [string range $step 1 end] }
        >* { sleep 0.2; send -- "[string range $step 1 end]\r" }
        !* { exec {*}$touch [string range $step 1 end] }
        w* { sleep [string range $step 1 end] }
    }
}
expect { eof {} timeout { puts "\nEXPECT: no end"; exit 124 } }
lassign [wait] pid spawn_id os_error status
exit $status
EXP
# on_terminal NAME STEPS SETUP COMMAND: COMMAND (a shell line, $LOCK_USER its user) through
# terminal.exp in a fresh namespace, after SETUP (a shell line, as root); out/NAME.log, NAME.rc.
on_terminal() {
    sandbox_run '
        mount --bind "$SANDBOX_DIR/etc-security" /etc/security || exit 1
        eval "$4"
        export LOCK_USER=$2
        SANDBOX_AS_TTY=1 expect -f "$SANDBOX_DIR/run/terminal.exp" "$SANDBOX_BUILD/biounlock --sim-socket $SANDBOX_SOCK sim scan" "$3" \
            bash -c "source \"\$SANDBOX_LIB\"; SANDBOX_AS_TTY=1 sandbox_as \"\$LOCK_USER\" $5" >"$SANDBOX_DIR/out/$1.log" 2>&1
        echo $? >"$SANDBOX_DIR/out/$1.rc"
    ' "$1" "$USER_" "$2" "$3" "$4"
}

# ---- vlock ----
vlock_steps='{=press \[ENTER\] to unlock} {>} {=or touch the reader: $}'
on_terminal vlock-touch "$vlock_steps {!$FINGER}" : "vlock -c"
on_terminal vlock-pin "$vlock_steps {>$PIN}" : "vlock -c"
check "vlock: setuid root, its type-or-touch prompt ('$USER_'s PIN or password for unlocking the screen, or touch the reader:'); a touch unlocks" \
    eval '[ "$(cat "$out/vlock-touch.rc")" = 0 ] && grep -q "PIN or password for unlocking the screen, or touch the reader: " "$out/vlock-touch.log"' -- "$out/vlock-touch.log"
check "vlock: the PIN typed at the same prompt unlocks" eval '[ "$(cat "$out/vlock-pin.rc")" = 0 ]' -- "$out/vlock-pin.log"

# ---- GNU screen's lock, on a terminal ----
# A session whose window locks the display at once (`screen -X lockscreen`, what C-a x runs):
# screen's attacher prints "Screen used by ... Password:", reads the password with echo off, then
# runs the `screen` service as the user with what was typed (every prompt gets it; texts are
# dropped) and, on a failure, asks again. Here, once the lock ends, the attacher leaves too (its
# session lives on, in a namespace that goes with the snippet): a run that ends with screen's
# status 0 after STEPS, with as many "Password:" prompts as they expect, was unlocked.
screen_setup='cp "$SANDBOX_DIR"/debian-pam.d/other "$SANDBOX_DIR"/debian-pam.d/common-* /etc/pam.d/; rm -f /etc/pam.d/screen'
screen_lock() { # NAME STEPS
    on_terminal "$1" "$2" "$screen_setup" \
        "env TERM=xterm SCREENDIR=/tmp/screens-\$LOCK_USER screen -q sh -c \"screen -X lockscreen; exec sleep 60\""
}
screen_unlocked() { # NAME PROMPTS
    [ "$(cat "$out/$1.rc")" = 0 ] && [ "$(grep -c "^Password:" "$out/$1.log")" = "$2" ]
}
screen_lock screen-pin "{=Password:} {>$PIN}"
check "GNU screen's lock (Debian: no pam.d file, so other and common-auth; as the user, through the checker): the PIN typed at its Password: unlocks" \
    screen_unlocked screen-pin 1 -- "$out/screen-pin.log"
screen_lock screen-password "{=Password:} {>$UNIX_PW}"
check "GNU screen's lock: the Unix password typed there unlocks (handed on to pam_unix)" screen_unlocked screen-password 1 -- "$out/screen-password.log"
screen_lock screen-touch "{=Password:} {>} {w1} {!$FINGER}"
check "GNU screen's lock: Enter alone, then a touch, unlocks" screen_unlocked screen-touch 1 -- "$out/screen-touch.log"
screen_lock screen-wrong-finger "{=Password:} {>} {w1} {!mallory} {w1} {!$FINGER}"
check "GNU screen's lock: after Enter alone, a wrong finger, then the right one, unlocks (screen shows no text; the reader goes on waiting)" \
    screen_unlocked screen-wrong-finger 1 -- "$out/screen-wrong-finger.log"
screen_lock screen-wrong-pin "{=Password:} {>$WRONG_PIN} {=Password:} {>$UNIX_PW}"
check "GNU screen's lock: a wrong PIN fails, screen asks again, and the Unix password unlocks" \
    screen_unlocked screen-wrong-pin 2 -- "$out/screen-wrong-pin.log"

# ---- what the store recorded, in order ----
"$BUILD_DIR/biounlock" --db "$SANDBOX_DB" log --user "$USER_" --limit 100 >"$out/log.txt" 2>&1
# Each line ends with the stored codes: "... (METHOD, OUTCOME, REASON)".
# The service is named after what the user was doing: "unlocking the screen (i3lock) on :0".
# A service with no words of its own (screen) is named as it is: "screen on pts/0".
tac "$out/log.txt" | awk 'match($0, /\([^ ()]+\) on /) { print substr($0, RSTART + 1, RLENGTH - 6), $(NF-1), $(NF-2), $NF; next }
                          $4 == "on" { print $3, $(NF-1), $(NF-2), $NF }' \
    | sed 's/[(),]//g' >"$out/rows.txt"
cat >"$out/rows.expected" <<EOF
i3lock success fingerprint finger-matched
i3lock success passcode passcode-accepted
i3lock unavailable password password-handed-over
i3lock unavailable passcode wrong-passcode
i3lock unavailable password password-handed-over
xscreensaver success passcode passcode-accepted
xscreensaver unavailable password password-handed-over
xscreensaver success fingerprint finger-matched
xscreensaver success passcode passcode-accepted
i3lock success fingerprint finger-matched
i3lock success passcode passcode-accepted
i3lock unavailable password password-handed-over
common-auth success fingerprint finger-matched
common-auth unavailable password password-handed-over
common-auth success passcode passcode-accepted
common-auth unavailable passcode wrong-passcode
common-auth unavailable password password-handed-over
vlock success fingerprint finger-matched
vlock success passcode passcode-accepted
screen success passcode passcode-accepted
screen unavailable password password-handed-over
screen success fingerprint finger-matched
screen success fingerprint finger-matched
screen unavailable passcode wrong-passcode
screen unavailable password password-handed-over
EOF
check "audit: one row per attempt, a root caller's rows (service, outcome, method, reason)" \
    diff "$out/rows.expected" "$out/rows.txt" -- "$out/log.txt" "$out/rows.txt"
"$BUILD_DIR/biounlock" --db "$SANDBOX_DB" log --user "$USER_" --limit 100 | sed "s/^/# /"
finish
