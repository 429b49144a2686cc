#!/usr/bin/env bash
# End-to-end: swaylock, the real Wayland locker, against build/pam_biounlock.so, in the
# mount-namespace sandbox (scripts/lib/sandbox.sh) with a sandbox user whose Unix password, PIN
# and finger are known.
#
#   bash Tests/EndToEnd/lockers-wayland.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# sway runs as that user with wlroots' headless backend, and swaylock in it, driven with wtype
# through the virtual-keyboard protocol (lockers/wayland-session.sh). swaylock runs PAM as the
# user, so the module goes through a setuid-root copy of build/biounlock-check. With the
# project's pam.d/swaylock, then with Debian's own /etc/pam.d/swaylock (`auth include login`,
# unedited) over Debian's login and the common-auth pam-auth-update writes with biounlock's
# profile: Enter then a touch of the simulated reader unlocks; so do the PIN and the Unix
# password typed; a wrong PIN and a wrong password leave it locked, and the Unix password then
# unlocks. Then the audit log holds exactly the rows a root caller would have left.
#
# The checker copy lives in a root-owned 0755 temp dir under .build/ (the module refuses one in
# /tmp, which others can write) and goes with it at exit. Prints "ok - ..." lines and
# "N passed, N failed".
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=../../scripts/lib/sandbox.sh
source "$repo/scripts/lib/sandbox.sh"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"

USER_=biwayland USER_UID=4263 UNIX_PW='Wayland-unix-pw-7' PIN=6142 FINGER=biwayland-right-index

helpers=""
cleanup() { sandbox_destroy; [ -n "$helpers" ] && rm -rf -- "$helpers"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
for tool in sway swaylock swaymsg wtype; do
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
helpers="$(mktemp -d "$repo/.build/test-helpers/lockers-wayland.XXXXXX")" && chmod 0755 "$helpers"
install -m 4755 -o root -g root "$BUILD_DIR/biounlock-check" "$helpers/biounlock-check"

# The root-owned config the checker reads (bound over /etc/security inside the sandbox), and
# swaylock's pam.d files.
mkdir -m 0755 "$SANDBOX_DIR/etc-security"
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
# The shipped example (pam.d/swaylock), with the built module and this checker copy put in.
sed "s|pam_biounlock\.so|$BUILD_DIR/pam_biounlock.so check_helper=$helpers/biounlock-check|" "$repo/pam.d/swaylock" \
    >"$SANDBOX_DIR/etc/pam.d/swaylock"
# swaylock as Debian ships it (the last scenarios put these in place): its file and Debian's
# login from Tests/Fixtures/debian-pam.d, unedited, and the common-auth Debian's real
# pam-auth-update writes with biounlock's profile, with the built module and this checker copy.
mkdir -p "$SANDBOX_DIR/debian-pam.d" "$SANDBOX_DIR/layout"
cp "$repo/Tests/Fixtures/debian-pam.d/swaylock" "$repo/Tests/Fixtures/debian-pam.d/login" "$SANDBOX_DIR/debian-pam.d/"
sh "$here/lib/pam-auth-update-layout.sh" "$SANDBOX_DIR/layout" "$repo/packaging/pam-configs/biounlock" >"$out/layout.log" 2>&1
sed "s|pam_biounlock\.so|$BUILD_DIR/pam_biounlock.so check_helper=$helpers/biounlock-check|" "$SANDBOX_DIR/layout/common-auth" \
    >"$SANDBOX_DIR/debian-pam.d/common-auth"
chmod 0644 "$SANDBOX_DIR/debian-pam.d/"* "$SANDBOX_DIR/etc/pam.d/"*

# ---- setup ----
sandbox_run '
    mount --bind "$SANDBOX_DIR/etc-security" /etc/security || exit 1
    { sandbox_enrol "$1" "$2" right-index && printf "%s\n" "$3" | bio passcode set "$1" --stdin && bio enable "$1"; } \
        >"$SANDBOX_DIR/out/setup.log" 2>&1
' "$USER_" "$FINGER" "$PIN"
check "setup: $USER_ enrols, sets a PIN, enables biometric unlock" test $? -eq 0 -- "$out/setup.log"

# ---- sway (headless) and swaylock ----
# (SANDBOX_PRIVATE_RUN: a private tmpfs on /run, so /run/user exists whatever the host has.)
cp "$here/lockers/wayland-session.sh" "$SANDBOX_DIR/run/wayland-session.sh"
SANDBOX_PRIVATE_RUN=1 sandbox_run '
    mount --bind "$SANDBOX_DIR/etc-security" /etc/security || exit 1
    LOCKERS_DEBUG=${LOCKERS_DEBUG:-} timeout -k 5 240 unshare --pid --fork --mount-proc bash -c "source \"\$SANDBOX_LIB\"; source \"\$SANDBOX_DIR/run/wayland-session.sh\" \"\$@\"" \
        wayland-session "$@" >"$SANDBOX_DIR/out/wayland-session.log" 2>&1
' "$USER_" "$USER_UID" "$UNIX_PW" "$PIN" "$FINGER"
result() { [ "$(cat "$out/$1.result" 2>/dev/null)" = "$2" ]; }
logs() { echo "$out/wayland-session.log" "$out/sway.log" "$out/wtype.log" "$out/touch.log" "$out/$1.swaylock.log"; }
check "sway: started headless as $USER_ (wlroots' headless backend, a keyboard through the virtual-keyboard protocol)" \
    result setup ok -- "$out/wayland-session.log" "$out/sway.log"
for p in swaylock debian-swaylock; do
    [ "$p" = swaylock ] && what="swaylock (pam.d/swaylock, the example)" || what="Debian's swaylock file (auth include login, common-auth from pam-auth-update)"
    # shellcheck disable=SC2046
    check "$what: Enter, then a touch of the reader, unlocks (through biounlock-check)" result "$p-touch" unlocked -- $(logs "$p-touch") "$out/layout.log"
    # shellcheck disable=SC2046
    check "$what: the PIN typed unlocks" result "$p-pin" unlocked -- $(logs "$p-pin")
    # shellcheck disable=SC2046
    check "$what: the Unix password typed unlocks (handed on to pam_unix)" result "$p-password" unlocked -- $(logs "$p-password")
    # shellcheck disable=SC2046
    check "$what: a wrong PIN leaves the screen locked" result "$p-wrong-pin" locked -- $(logs "$p-wrong")
    # shellcheck disable=SC2046
    check "$what: ... so does a wrong password" result "$p-wrong-password" locked -- $(logs "$p-wrong")
    # shellcheck disable=SC2046
    check "$what: ... and the Unix password then unlocks" result "$p-wrong-then-password" unlocked -- $(logs "$p-wrong")
done
# ---- what the store recorded, in order ----
"$BUILD_DIR/biounlock" --db "$SANDBOX_DB" log --user "$USER_" --limit 100 >"$out/log.txt" 2>&1
# Each line ends with the stored codes: "... (METHOD, OUTCOME, REASON)"; the service is named
# after what the user was doing: "unlocking the screen (swaylock)" (no terminal: swaylock sets none).
tac "$out/log.txt" | sed -nE 's/.*\(([^ ()]+)\)  .*\(([a-z]+), ([a-z]+), ([a-z-]+)\)$/\1 \3 \2 \4/p' >"$out/rows.txt"
rows="swaylock success fingerprint finger-matched
swaylock success passcode passcode-accepted
swaylock unavailable password password-handed-over
swaylock unavailable passcode wrong-passcode
swaylock unavailable password password-handed-over
swaylock unavailable password password-handed-over"
printf '%s\n%s\n' "$rows" "$rows" >"$out/rows.expected"
check "audit: one row per attempt, a root caller's rows (service, outcome, method, reason)" \
    diff "$out/rows.expected" "$out/rows.txt" -- "$out/log.txt" "$out/rows.txt"
"$BUILD_DIR/biounlock" --db "$SANDBOX_DB" log --user "$USER_" --limit 100 | sed "s/^/# /"
finish
