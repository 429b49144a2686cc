#!/usr/bin/env bash
# End-to-end, issue 31: the settings app as a person uses it. biounlock-settings runs as the
# user under Xvfb with a session bus and the AT-SPI bus, against biounlockd on the private
# system bus of the self-service tests (the real dbus-daemon and polkitd, D-Bus activation:
# Tests/EndToEnd/lib/service.bash) with the simulated sensor; Tests/EndToEnd/lib/settings-driver.py
# drives the real window through AT-SPI (python3-pyatspi) and saves screenshots, which land in
# BUILD_DIR/screenshots/.
#
#   bash Tests/EndToEnd/settings-app.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# Everything runs in the sandbox (scripts/lib/sandbox.sh: private mount and PID namespaces, a
# private /run); Xvfb and the app in a network namespace of their own as well, so that the X
# server's abstract socket is private.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"
# shellcheck source=lib/callers.bash
source "$here/lib/callers.bash"
# shellcheck source=lib/service.bash
source "$here/lib/service.bash"

USER_=bssettings USER_UID=4361 USER_PW='settings-unix-Pw-5' USER_PIN=5731 USER_FINGER=bssettings-right-index
export SERVICE_ACTIVE_LOCAL="$USER_" SERVICE_IDLE=30
export SETTINGS_DRIVER="$here/lib/settings-driver.py"

for tool in /usr/lib/polkit-1/polkitd dbus-daemon dbus-run-session Xvfb import /usr/libexec/at-spi-bus-launcher /usr/bin/python3 \
    desktop-file-validate appstreamcli; do
    [ -x "$tool" ] || command -v "$tool" >/dev/null 2>&1 || { fail "sandbox: $tool is installed (./scripts/deps)"; finish; }
done
/usr/bin/python3 -c 'import pyatspi' 2>/dev/null || { fail "sandbox: python3-pyatspi is installed (./scripts/deps)"; finish; }
for b in biounlockd biounlock-settings; do
    [ -x "$BUILD_DIR/$b" ] || { fail "a build of $b in $BUILD_DIR (./scripts/build)"; finish; }
done
SANDBOX_WATCHED+=(/usr/share/dbus-1 /etc/dbus-1)
callers_host_before
trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP
callers_setup
sandbox_add_user "$USER_" "$USER_UID" "$USER_PW"
# One wrong finger locks the finger out (bio_lockout=1), for sudo's module and for the service
# alike, so that the window's lockout row has something to say; two wrong PINs lock the passcode
# for a minute (passcode_lockout=2), so that its row has a countdown to show.
export SANDBOX_MODULE_ARGS="bio_lockout=1 passcode_lockout=2"
sandbox_write_config
printf 'bio_lockout = 1\npasscode_lockout = 2\n' >"$SANDBOX_DIR/etc/biounlock.conf"
chmod 0644 "$SANDBOX_DIR/etc/biounlock.conf"

# One namespace, one system bus, one polkitd and one biounlockd for every scenario; each
# scenario is one run of the app under a fresh Xvfb (in a network namespace of its own) and a
# fresh session bus, and leaves out/NAME/ (the driver's results, trees, screenshots).
# shellcheck disable=SC2016
in_sandbox '
    source "$SERVICE_LIB"
    o="$SANDBOX_DIR/out"
    service_start >"$o/start.log" 2>&1 || exit 1
    uid=$(id -u "$1")
    # The user s session: a runtime directory and a home of their own; /run is the sandbox s own tmpfs.
    install -d -m 0700 -o "$uid" -g "$uid" "/run/user/$uid" /run/tmp/home
    scenario() {   # NAME: the driver s scenario NAME, its files in out/NAME/
        install -d -m 0700 -o "$uid" -g "$uid" "/run/tmp/$1"
        APP_STYLE="${APP_STYLE:-default}" SYSTEM_BUS="${SYSTEM_BUS:-}" DRIVER_PASSWORD="$2" DRIVER_PIN="$3" APP_LANG="${4:-C.UTF-8}" DRIVER_NAMES="${5:-}" timeout -k 5 120 unshare --net bash -c '"'"'
            name=$1 uid=$2 user=$3 o=$4
            Xvfb -displayfd 7 -nolisten tcp -nolisten unix -noreset -screen 0 640x720x24 7>"$o/$name.display" 2>"$o/$name.xvfb.log" &
            for _ in $(seq 200); do [ -s "$o/$name.display" ] && break; sleep 0.05; done
            [ -s "$o/$name.display" ] || { echo "Xvfb did not start" >"$o/$name.xvfb"; exit 1; }
            echo ok >"$o/$name.xvfb"
            cd / && setpriv --reuid="$uid" --regid="$uid" --clear-groups env -i PATH=/usr/bin:/bin HOME=/run/tmp/home USER="$user" LOGNAME="$user" \
                XDG_RUNTIME_DIR="/run/user/$uid" DISPLAY=":$(cat "$o/$name.display")" LANG="$APP_LANG" GSK_RENDERER=cairo GDK_BACKEND=x11 ADW_DEBUG_COLOR_SCHEME="$APP_STYLE" \
                DBUS_SYSTEM_BUS_ADDRESS="${SYSTEM_BUS:-unix:path=/run/dbus/system_bus_socket}" BIOUNLOCK_LOCALE_DIR="$SANDBOX_BUILD/locale" DRIVER_PASSWORD="$DRIVER_PASSWORD" DRIVER_PIN="$DRIVER_PIN" DRIVER_NAMES="$DRIVER_NAMES" \
                dbus-run-session -- /usr/bin/python3 "$SETTINGS_DRIVER" "/run/tmp/$name" "$name" "$SANDBOX_BUILD/biounlock-settings" >"$o/$name.log" 2>&1
        '"'"' x "$1" "$uid" "$USER_NAME" "$o"
        mkdir -p "$o/$1" && cp -r "/run/tmp/$1/." "$o/$1/"
    }
    USER_NAME=$1
    # No system bus to reach (its address names nothing): the window says so.
    SYSTEM_BUS=unix:path=/run/tmp/no-such-bus scenario noservice
    # Nothing enrolled, no passcode: the toggle refuses and offers the fixes.
    scenario refuse
    # The same window when the system prefers dark (what the settings portal says on a desktop;
    # here the ADW_DEBUG_COLOR_SCHEME of libadwaita stands in for it).
    APP_STYLE=prefer-dark scenario dark
    # What the service kept: nothing changed by a refusal.
    bio status --json >"$o/after-refuse.status.json" 2>&1
    bio log --json --limit 1000 >"$o/after-refuse.events.json" 2>&1
    # The same in German (build/locale): the window and its refusal in the user s language.
    scenario refuse-de "" "" de_DE.UTF-8 "{\"toggle\": \"Entsperren per Fingerabdruck\", \"none\": \"Keine Finger registriert\",
        \"add\": \"Finger hinzufügen\", \"pin\": \"PIN festlegen\", \"why\": \"Noch ist kein Finger registriert\",
        \"whypin\": \"Keine PIN und kein Passwort\"}"
    # The fix for the missing passcode, from the window: the password, then the PIN twice.
    scenario pin "$2" "$3"
    bio status --json >"$o/after-pin.status.json" 2>&1
    bio log --json --limit 1000 >"$o/after-pin.events.json" 2>&1
    # Add a Finger from the window, five simulated touches: two, then (once the driver saw
    # "2 of 5" and says so) three more; then the toggle goes on.
    install -d -m 0700 -o "$uid" -g "$uid" /run/tmp/enrol
    ( SANDBOX_TOUCH_WAIT=40 sandbox_touch "$4" "$4" || exit 1
      for _ in $(seq 800); do [ -e /run/tmp/enrol/continue ] && break; sleep 0.05; done
      SANDBOX_TOUCH_WAIT=40 sandbox_touch "$4" "$4" "$4" ) >"$o/enrol.touch" 2>&1 &
    finger=$!
    scenario enrol "$2" "$3"
    kill $finger 2>/dev/null; wait $finger; echo $? >"$o/enrol.touchrc"
    bio status --json >"$o/after-enrol.status.json" 2>&1
    bio log --json --limit 1000 >"$o/after-enrol.events.json" 2>&1
    # The same window in Japanese, its expander opened (the screenshot the README shows).
    scenario where-ja "" "" ja_JP.UTF-8 "{\"toggle\": \"指紋によるロック解除\", \"where\": \"使用する場所\", \"login\": \"ログイン画面とロック画面\"}"
    # sudo then: the PIN first (the fingers changed since it was last typed), then the finger.
    run() { local name=$1 input=$2; shift 2
        printf "%b" "$input" >"$o/$name.in"
        sandbox_as "$USER_NAME" "$@" <"$o/$name.in" >"$o/$name.out" 2>"$o/$name.err"; echo $? >"$o/$name.rc"; }
    run sudo-pin "$3\n" /usr/bin/sudo -S -k id -u
    SANDBOX_TOUCH_LOG="$o/sudo-touch.touch" sandbox_touch_bg "$4"
    run sudo-touch "" /usr/bin/sudo -S -k id -u
    sandbox_touch_end 3; echo $? >"$o/sudo-touch.touchrc"
    # A wrong finger at sudo: the finger is locked out (bio_lockout=1); the password is asked
    # (nothing typed: sudo fails).
    SANDBOX_TOUCH_LOG="$o/sudo-wrong.touch" sandbox_touch_bg "$4-wrong"
    run sudo-wrong "" /usr/bin/sudo -S -k id -u
    sandbox_touch_end 3
    bio --config "$SANDBOX_DIR/etc/biounlock.conf" status --json >"$o/after-wrong.status.json" 2>&1
    # Two wrong PINs at sudo (each handed on to pam_unix, which refuses it too): the passcode is
    # locked for a minute.
    wrong_pin=9753; [ "$3" = 9753 ] && wrong_pin=8642
    run sudo-wrong-pin-1 "$wrong_pin\n" /usr/bin/sudo -S -k id -u
    run sudo-wrong-pin-2 "$wrong_pin\n" /usr/bin/sudo -S -k id -u
    bio --config "$SANDBOX_DIR/etc/biounlock.conf" status --json >"$o/after-wrong-pins.status.json" 2>&1
    # The finger removed from the window.
    scenario remove "$2"
    bio status --json >"$o/after-remove.status.json" 2>&1
    bio log --json --limit 1000 >"$o/after-remove.events.json" 2>&1
    # The cancelled enrolment: its worker gone too (the service says no enrolment runs).
    sandbox_as "$USER_NAME" dbus-send --system --print-reply --dest=org.biounlock.Manager1 /org/biounlock/Manager1 \
        org.biounlock.Manager1.GetStatus string: >"$o/after-cancel.dbus" 2>&1
    # The pattern drawn in the window with the pointer (1 -> 3 -> 9, which picks up 2 and 6) and confirmed with the keys:
    # the service stores it, and sudo takes it typed as its digits (no finger is left).
    scenario pattern "$2"
    bio status --json >"$o/after-pattern.status.json" 2>&1
    bio log --json --limit 1000 >"$o/after-pattern.events.json" 2>&1
    run sudo-pattern "12369\n" /usr/bin/sudo -S -k id -u
    run sudo-pattern-wrong "1236\n" /usr/bin/sudo -S -k id -u
'  "$USER_" "$USER_PW" "$USER_PIN" "$USER_FINGER"

r="$out/refuse/driver.results"
logs=("$out/refuse.log" "$r" "$out/refuse/app.err" "$out/start.log" "$out/svc/dbus.log")
result() { grep -qx "ok $1" "$r" 2>/dev/null; }
check "X: Xvfb started in a network namespace of its own" grep -qx ok "$out/refuse.xvfb" -- "$out/refuse.xvfb.log"
check "app: the window appears with its toggle, found through AT-SPI by role and name (check box 'Fingerprint Unlock')" result toggle-found -- "${logs[@]}"
check "app: biounlockd's status arrives (asynchronously) and the toggle becomes usable" result status-shown -- "${logs[@]}"
check "app: the toggle is off by default" result toggle-off-by-default -- "${logs[@]}"
check "app: the fingers group says no finger is enrolled" result fingers-none-shown -- "${logs[@]}"
check "app: the process maps neither libfprint nor SQLite (a client of biounlockd only)" result no-store-no-reader -- "${logs[@]}"
check "keyboard only: Tab reaches the switch (and Space turns it on, below)" result keyboard-focus-toggle -- "${logs[@]}" "$out/refuse/refused.tree"
check "toggle on with nothing enrolled: refused, with an 'Add a Finger' button that fixes it" result refused-fix-offered -- "${logs[@]}" "$out/refuse/refused.tree"
check "toggle on with nothing enrolled: the row says why (no finger is enrolled yet)" result refused-says-why -- "${logs[@]}" "$out/refuse/refused.tree"
check "toggle on with no passcode: a 'Set a PIN' button too" result refused-pin-fix-offered -- "${logs[@]}" "$out/refuse/refused.tree"
check "toggle on refused: the switch goes back off and can be used again" result refused-toggle-stays-off -- "${logs[@]}" "$out/refuse/refused.tree"
# The accessible tree is in the window's order: what is missing comes right under the switch.
check "toggle on refused: what is missing is said right under the switch, above Where to Use It" \
    eval 'python3 -c "
import sys
t = open(sys.argv[1]).read()
m, w = t.find(\"No finger is enrolled yet\"), t.find(\"Where to Use It\")
sys.exit(0 if 0 <= m < w else 1)" "$out/refuse/refused.tree"' -- "$out/refuse/refused.tree"
check "the app is still running after the refusal" result app-still-running -- "${logs[@]}"
check "a screenshot of the refusal was taken" result screenshot-refused -- "${logs[@]}" "$out/refuse/refused.import.err"
# The system's style: the same window dark when the system prefers dark, light by default (the
# mean grey level of each screenshot, 0 black to 1 white; ImageMagick's own measure).
brightness() { convert "$1" -colorspace Gray -format '%[fx:mean]' info: 2>/dev/null || echo -1; }
light_level=$(brightness "$out/refuse/refused.png") dark_level=$(brightness "$out/dark/dark.png")
echo "# measured: mean grey level $light_level (default style), $dark_level (prefer-dark)"
check "style: the window follows the system's dark preference (dark screenshot mostly dark, the default one mostly light)" \
    eval 'grep -qx "ok status-shown" "$out/dark/driver.results" && awk -v l="$light_level" -v d="$dark_level" "BEGIN { exit !(l > 0.6 && d >= 0 && d < 0.35) }"' \
    -- "$out/dark/driver.results" "$out/dark.log"
check "nothing failed in the driver" eval '! grep -q "^fail" "$r"' -- "$r"
check "the service changed nothing: no record was written for $USER_ (biometric unlock stays off)" \
    eval '[ "$(user_field after-refuse "$USER_" enabled)" = null ] && grep -q "\"users\": \[\]" "$out/after-refuse.status.json"' -- "$out/after-refuse.status.json"
check "the refusal left no change in the audit log (CheckEnable reads only)" \
    eval '[ "$(events_of after-refuse "$USER_" biounlockd)" = 0 ]' -- "$out/after-refuse.events.json"

n="$out/noservice/driver.results"
check "no service reachable: the window says 'Cannot Reach the Service' in words, shows no status, the toggle cannot be used, no D-Bus name on screen" \
    eval 'grep -qx "ok noservice-said" "$n" && grep -qx "ok noservice-nothing-offered" "$n" && ! grep -q "^fail" "$n"' \
    -- "$n" "$out/noservice.log" "$out/noservice/noservice.tree"

g="$out/refuse-de/driver.results"
check "in German (de_DE.UTF-8): the toggle, the empty finger list, the refusal's reason and both fix buttons in German" \
    eval '( for n in toggle-found status-shown fingers-none-shown refused-fix-offered refused-says-why refused-pin-fix-offered refused-toggle-stays-off; do
              grep -qx "ok $n" "$g" || exit 1; done ) && ! grep -q "^fail" "$g" &&
          grep -q "^push button '"'"'Finger hinzufügen'"'"'" "$out/refuse-de/refused.tree" && ! grep -q "Add a Finger" "$out/refuse-de/refused.tree"' \
    -- "$g" "$out/refuse-de.log" "$out/refuse-de/refused.tree"

j="$out/where-ja/driver.results"
check "in Japanese (ja_JP.UTF-8): the toggle, the expander and its switches in Japanese; the expander opens from the keyboard" \
    eval 'grep -qx "ok toggle-found" "$j" && grep -qx "ok where-ja-opened" "$j" && ! grep -q "^fail" "$j" &&
          grep -q "^check box '"'"'sudo'"'"'" "$out/where-ja/where-ja.tree" && grep -q "^label '"'"'その他すべて'"'"'" "$out/where-ja/where-ja.tree" &&
          ! grep -q "Login and Lock Screen" "$out/where-ja/where-ja.tree"' \
    -- "$j" "$out/where-ja.log" "$out/where-ja/where-ja.tree"

p="$out/pin/driver.results"
plogs=("$out/pin.log" "$p" "$out/pin/app.err" "$out/svc/dbus.log")
presult() { grep -qx "ok $1" "$p" 2>/dev/null; }
check "Set a PIN: the button opens a dialog with the kind (PIN chosen) and three named password fields (your password, the new passcode, again)" \
    eval 'presult pin-dialog-fields && presult pin-kind-default'  -- "${plogs[@]}" "$out/pin/pin-dialog.tree"
check "Set a PIN: typed through AT-SPI, confirmed; the passcode row then says PIN" presult pin-set-shown -- "${plogs[@]}" "$out/pin/pin-set.tree"
check "Set a PIN: the missing passcode is no longer said; the missing finger still is, with its button" presult pin-fix-gone-finger-fix-stays -- "${plogs[@]}" "$out/pin/pin-set.tree"
check "Set a PIN: nothing failed in the driver" eval '! grep -q "^fail" "$p" && grep -q "^ok screenshot-pin-set" "$p"' -- "$p"
check "Set a PIN: no GLib or GTK critical or warning on the app's stderr (GTK 4.8's password entry outlives its dialog)" \
    eval '[ -f "$out/pin/app.err" ] && ! grep -qE "CRITICAL|WARNING|invalid unclassed" "$out/pin/app.err" "$out/refuse/app.err"' -- "$out/pin/app.err" "$out/refuse/app.err"
check "Set a PIN: the service stored a PIN for $USER_ (status: passcode pin)" \
    eval '[ "$(user_field after-pin "$USER_" passcode)" = "\"pin\"" ]' -- "$out/after-pin.status.json"
check "Set a PIN: with its audit row (service biounlockd)" \
    eval '[ "$(events_of after-pin "$USER_" biounlockd)" -ge 1 ]' -- "$out/after-pin.events.json"
check "Set a PIN: still no finger and biometric unlock still off" \
    eval '[ "$(user_field after-pin "$USER_" enabled)" = false ] && [ "$(user_field after-pin "$USER_" fingers)" = "[]" ]' -- "$out/after-pin.status.json"

# The app's data files, as distributions check them.
e="$out/enrol/driver.results"
elogs=("$out/enrol.log" "$e" "$out/enrol/app.err" "$out/enrol.touch")
eresult() { grep -qx "ok $1" "$e" 2>/dev/null; }
check "Add a Finger: with the PIN set, turning on is refused for the finger alone (only 'Add a Finger' offered)" eresult enrol-refused-finger-only -- "${elogs[@]}"
check "Add a Finger: asks for the password first (a named password field)" eresult enrol-asks-password -- "${elogs[@]}"
check "Add a Finger: an enrolment dialog with a progress bar named 'Enrolment progress'" eresult enrol-dialog -- "${elogs[@]}"
check "Add a Finger: after two touches it says 'Touch 2 of 5 taken.' and the bar is at 40%" eresult enrol-progress-2-of-5 -- "${elogs[@]}" "$out/enrol/enrolling.tree"
check "Add a Finger: after five, 'Right index finger enrolled.' and the bar is full" eresult enrol-done -- "${elogs[@]}" "$out/enrol/enrolled.tree"
check "Add a Finger: a fingerprint image fills in with the touches (its description: 'Touch 2 of 5 taken.', then 'Right index finger enrolled.')" \
    eval 'grep -qx "ok enrol-image-2-of-5" "$e" && grep -qx "ok enrol-image-done" "$e"' -- "${elogs[@]}" "$out/enrol/enrolling.tree"
check "Add a Finger: the finger is listed, and nothing is said missing any more" \
    eval 'eresult enrol-finger-listed && eresult enrol-fix-gone' -- "${elogs[@]}"
check "the toggle turns on (no second password within the proof's minutes) and says On" eresult toggle-on -- "${elogs[@]}" "$out/enrol/on.tree"
check "recent events: the PIN set, the finger enrolled and turning it on, in words (GetEvents)" eresult events-shown -- "${elogs[@]}" "$out/enrol/on.tree"
check "Add a Finger: nothing failed in the driver, no GLib/GTK warning" \
    eval '! grep -q "^fail" "$e" && ! grep -qE "CRITICAL|WARNING" "$out/enrol/app.err"' -- "$e" "$out/enrol/app.err"
check "Add a Finger: the service stored the right index finger and biometric unlock is on" \
    eval '[ "$(user_field after-enrol "$USER_" enabled)" = true ] && grep -q "right-index-finger" "$out/after-enrol.status.json"' -- "$out/after-enrol.status.json"
check "Where to Use It: the expander opens from the keyboard (Tab, Space) onto three switches (sudo, Login and Lock Screen, Everything Else), all on after the main switch" \
    eval 'eresult where-opened && eresult where-all-on' -- "${elogs[@]}" "$out/enrol/where.tree"
check "Where to Use It: 'Login and Lock Screen' turned off (no password asked); sudo, Everything Else and the main switch stay on; the recent events say so in words" \
    eresult where-login-off -- "${elogs[@]}" "$out/enrol/where.tree"
check "... the service: login, gdm-password, lightdm, i3lock and kde off by override, sudo and su on (no override: the toggle), one audit row 'disabled:@login'" \
    eval '( for s in login gdm-password lightdm i3lock kde; do [ "$(user_field after-enrol "$USER_" services.$s)" = false ] || exit 1; done ) &&
          [ "$(user_field after-enrol "$USER_" services.sudo)" = null ] && [ "$(user_field after-enrol "$USER_" services.su)" = null ] &&
          [ "$(user_field after-enrol "$USER_" enabled)" = true ] &&
          [ "$(python3 -c "import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))[\"events\"] if e[\"outcome\"] == \"disabled:@login\"))" "$out/after-enrol.events.json")" = 1 ]' \
    -- "$out/after-enrol.status.json" "$out/after-enrol.events.json"
check "sudo then: the PIN first (the fingers changed since it was typed)" \
    eval '[ "$(cat "$out/sudo-pin.rc")" = 0 ] && grep -qx 0 "$out/sudo-pin.out" && grep -q "^PIN required" "$out/sudo-pin.out"' \
    -- "$out/sudo-pin.out" "$out/sudo-pin.err"
check "sudo then: takes the finger the app enrolled (no password typed), with the login and lock screen turned off in the window" \
    eval '[ "$(cat "$out/sudo-touch.rc")" = 0 ] && grep -qx 0 "$out/sudo-touch.out" && [ "$(cat "$out/sudo-touch.touchrc")" = 0 ] &&
          grep -q "^Touch the fingerprint reader" "$out/sudo-touch.out" && [ ! -s "$out/sudo-touch.err" ]' \
    -- "$out/sudo-touch.out" "$out/sudo-touch.err" "$out/sudo-touch.touch"

m="$out/remove/driver.results"
check "a wrong finger at sudo (bio_lockout=1): the service's status says the finger is locked out" \
    eval '[ "$(user_field after-wrong "$USER_" biometric_lockout.locked)" = true ]' -- "$out/after-wrong.status.json" "$out/sudo-wrong.out" "$out/sudo-wrong.err"
check "... and the window's Fingerprint Lockout row says Locked, and what clears it (the passcode first)" \
    eval 'grep -qx "ok lockout-shown" "$m"' -- "$m" "$out/remove/lockout.tree"
check "two wrong PINs at sudo (passcode_lockout=2): the service's status says the passcode is locked for a time" \
    eval '[ "$(user_field after-wrong-pins "$USER_" passcode_lockout.locked)" = true ] && [ "$(cat "$out/sudo-wrong-pin-2.rc")" != 0 ]' \
    -- "$out/after-wrong-pins.status.json" "$out/sudo-wrong-pin-1.out" "$out/sudo-wrong-pin-2.out"
check "... and the window's Passcode Lockout row counts down the time left, second by second" \
    eval 'grep -qx "ok lockout-counts-down" "$m"' -- "$m" "$out/remove/countdown.tree"
check "Remove a finger: its row's button (named 'Remove Right index finger') asks for the password, then the row is gone" \
    eval '( for n in remove-button remove-asks-password remove-done; do grep -qx "ok $n" "$m" || exit 1; done ) && ! grep -q "^fail" "$m"' \
    -- "$m" "$out/remove.log" "$out/remove/app.err" "$out/remove/removed.tree"
check "a wrong password in the proof dialog: a toast says so in words (no D-Bus error name), nothing removed" \
    eval 'grep -qx "ok wrong-password-said" "$m" && ! grep -q "org.biounlock\|org.freedesktop" "$out/remove/wrong-password.tree"' \
    -- "$m" "$out/remove/wrong-password.tree"
check "Remove a finger: the service has no finger left for $USER_" \
    eval '[ "$(user_field after-remove "$USER_" fingers)" = "[]" ]' -- "$out/after-remove.status.json"
check "Add a Finger from the fingers group, then Cancel while the reader waits: the dialog closes" \
    eval '( for n in fingers-add-button cancel-reader-ready cancel-closed; do grep -qx "ok $n" "$m" || exit 1; done )' \
    -- "$m" "$out/remove.log" "$out/remove/app.err"
check "Remove the passcode from its row: the row says Not set and offers Set a PIN; the service recorded passcode-removed" \
    eval 'grep -qx "ok passcode-remove-button" "$m" && grep -qx "ok passcode-removed" "$m" && grep -q "\"passcode-removed\"" "$out/after-remove.events.json"' \
    -- "$m" "$out/remove/passcode-removed.tree" "$out/after-remove.events.json"
check "A password as the passcode: chosen in the dialog (the 'Password' toggle of the PIN-or-password group), typed, set; the row says Password" \
    eval 'grep -qx "ok password-kind-chosen" "$m" && grep -qx "ok password-set-shown" "$m" && [ "$(user_field after-remove "$USER_" passcode)" = "\"password\"" ]' \
    -- "$m" "$out/remove/app.err" "$out/after-remove.status.json"
check "... and nothing was stored: no finger, and no enrolment left running in the service" \
    eval '[ "$(user_field after-remove "$USER_" fingers)" = "[]" ] && grep -A1 "\"enrolling\"" "$out/after-cancel.dbus" | grep -q "boolean false"' \
    -- "$out/after-cancel.dbus"

t="$out/pattern/driver.results"
tlogs=("$t" "$out/pattern.log" "$out/pattern/app.err")
tresult() { grep -qx "ok $1" "$t" 2>/dev/null; }
check "Pattern: 'Change the Passcode' offers the Pattern kind, and the grid is an accessible object named 'Pattern grid' with how to use it (drag, or keys 1-9)" \
    eval 'tresult pattern-kind-chosen && tresult pattern-grid-named' -- "${tlogs[@]}" "$out/pattern/pattern-dialog.tree"
check "Pattern: a pointer drag (xdotool: button down on 1, moves to 3 and 9, button up) is taken; the window asks for it again" tresult pattern-first-drawn -- "${tlogs[@]}"
check "Pattern: a different second drawing is refused in words (not the same), and drawing starts again" tresult pattern-mismatch-said -- "${tlogs[@]}"
check "Pattern: the grid stays where it was after the mismatch (the message does not widen the dialog and move the dots from under the pointer)" \
    tresult pattern-grid-stays -- "${tlogs[@]}" "$out/pattern/pattern-mismatch.tree"
check "Pattern: a third drag (1 -> 3 -> 9 again) is taken; the window asks for it again; the grid has the keyboard focus" \
    eval 'tresult pattern-drawn-after-mismatch && tresult pattern-grid-focused' -- "${tlogs[@]}"
check "Pattern: confirmed with the keys 1, 3, 9 and Enter: 5 points (the typed line picked up 2 and 6, as the dragged one did); Enter does not answer the dialog" \
    eval 'tresult pattern-confirmed-5-points && tresult pattern-enter-stays' -- "${tlogs[@]}" "$out/pattern/pattern-drawn.tree"
check "Pattern: set; the passcode row says Pattern; nothing failed in the driver, no GLib/GTK warning" \
    eval 'tresult pattern-set-shown && ! grep -q "^fail" "$t" && ! grep -qE "CRITICAL|WARNING" "$out/pattern/app.err"' -- "${tlogs[@]}" "$out/pattern/pattern-set.tree"
check "Pattern: the service stored a pattern for $USER_ (status: passcode pattern)" \
    eval '[ "$(user_field after-pattern "$USER_" passcode)" = "\"pattern\"" ]' -- "$out/after-pattern.status.json"
check "Pattern: sudo takes it typed as the canonical digits 12369 (the module hashes the picked-up points too)" \
    eval '[ "$(cat "$out/sudo-pattern.rc")" = 0 ] && grep -qx 0 "$out/sudo-pattern.out"' -- "$out/sudo-pattern.out" "$out/sudo-pattern.err"
check "Pattern: and refuses 1236, a different pattern (the password is then asked; none typed)" \
    eval '[ "$(cat "$out/sudo-pattern-wrong.rc")" != 0 ] && ! grep -qx 0 "$out/sudo-pattern-wrong.out"' -- "$out/sudo-pattern-wrong.out" "$out/sudo-pattern-wrong.err"

check "data: the .desktop file passes desktop-file-validate (Settings category; keywords fingerprint, PIN, unlock)" \
    eval 'desktop-file-validate "$repo/data/applications/org.biounlock.Settings.desktop" >"$out/desktop.txt" 2>&1 &&
          grep -qx "Categories=GTK;Settings;Security;" "$repo/data/applications/org.biounlock.Settings.desktop" &&
          grep -q "^Keywords=fingerprint;PIN;unlock;" "$repo/data/applications/org.biounlock.Settings.desktop"' -- "$out/desktop.txt"
check "data: the AppStream metainfo passes appstreamcli validate --no-net" \
    eval 'appstreamcli validate --no-net "$repo/data/metainfo/org.biounlock.Settings.metainfo.xml" >"$out/metainfo.txt" 2>&1' -- "$out/metainfo.txt"
check "data: the icon is an SVG that GdkPixbuf renders" \
    /usr/bin/python3 -c 'import gi, sys; gi.require_version("GdkPixbuf", "2.0"); from gi.repository import GdkPixbuf
p = GdkPixbuf.Pixbuf.new_from_file_at_size(sys.argv[1], 128, 128); sys.exit(0 if p.get_width() == 128 else 1)' \
    "$repo/data/icons/hicolor/scalable/apps/org.biounlock.Settings.svg"

check "as root the app refuses to start (it manages the user's own account; root has the CLI)" \
    eval '! env -i PATH=/usr/bin:/bin LANG=C "$BUILD_DIR/biounlock-settings" >"$out/root.txt" 2>&1 && grep -q "does not run as root" "$out/root.txt"' -- "$out/root.txt"

mkdir -p "$BUILD_DIR/screenshots"
cp "$out/refuse/refused.png" "$BUILD_DIR/screenshots/settings-refused.png" 2>/dev/null
cp "$out/pin/pin-dialog.png" "$BUILD_DIR/screenshots/settings-pin-dialog.png" 2>/dev/null
cp "$out/pin/pin-set.png" "$BUILD_DIR/screenshots/settings-pin-set.png" 2>/dev/null
cp "$out/enrol/enrolling.png" "$BUILD_DIR/screenshots/settings-enrolling.png" 2>/dev/null
cp "$out/enrol/on.png" "$BUILD_DIR/screenshots/settings-on.png" 2>/dev/null
cp "$out/enrol/where.png" "$BUILD_DIR/screenshots/settings-where.png" 2>/dev/null
cp "$out/where-ja/where-ja.png" "$BUILD_DIR/screenshots/settings-ja.png" 2>/dev/null
cp "$out/pattern/pattern-dialog.png" "$BUILD_DIR/screenshots/settings-pattern-dialog.png" 2>/dev/null
cp "$out/pattern/pattern-drawn.png" "$BUILD_DIR/screenshots/settings-pattern.png" 2>/dev/null
cp "$out/pattern/pattern-mismatch.png" "$BUILD_DIR/screenshots/settings-pattern-mismatch.png" 2>/dev/null
cp "$out/refuse-de/refused.png" "$BUILD_DIR/screenshots/settings-refused-de.png" 2>/dev/null
cp "$out/dark/dark.png" "$BUILD_DIR/screenshots/settings-dark.png" 2>/dev/null
callers_host_after
finish
