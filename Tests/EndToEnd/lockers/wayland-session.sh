# shellcheck shell=bash
# wayland-session.sh: the Wayland part of Tests/EndToEnd/lockers-wayland.sh, sourced INSIDE the
# sandbox (as root, in its private mount namespace) and inside a further `unshare --pid --fork
# --mount-proc`: the PID namespace ends sway, swaylock, wtype and everything they started when
# this script ends, however it ends. sway runs as the locker's user with the headless wlroots
# backend (no DRM, no input devices, the pixman renderer), its socket in a private 0700
# XDG_RUNTIME_DIR of that user; keys come through the virtual-keyboard protocol (wtype).
#
# How a key is known to reach swaylock: sway 1.7 has no ext-session-lock, so swaylock 1.7.2 locks
# with wlr-input-inhibitor and a layer surface, and sway gives the keyboard to that surface once
# it is mapped; keys sent before are lost. A keyboard is kept in the seat for the whole session (a
# wtype that only sleeps), so swaylock binds wl_keyboard at start, and swaylock runs with
# WAYLAND_DEBUG=1: its "wl_keyboard@N.enter(" line is the moment its surface holds the keyboard.
# Each typing wtype then brings its own keymap on that same wl_keyboard, ahead of its keys.
#
# Runs each scenario and writes $OUT/NAME.result ("unlocked", "locked", or why not) for the outer
# script to check. Every wait is bounded. Args: USER UID UNIX-PASSWORD PIN FINGER.
set -u
[ -n "${LOCKERS_DEBUG:-}" ] && set -x
user=$1 uid=$2 password=$3 pin=$4 finger=$5
OUT=$SANDBOX_DIR/out
# The sandbox directory is root's alone: the user's runtime directory (sway's socket, its
# config) is on a tmpfs over /run/user, in this mount namespace only.
mount -t tmpfs -o mode=0755,size=4m wayland-run /run/user || { echo "no tmpfs on /run/user" >"$OUT/setup.result"; exit 1; }
rt=/run/user/$uid
install -d -m 0700 -o "$uid" -g "$uid" "$rt"

as_user() { # CMD...: as the locker's user, with a clean environment and this compositor
    (cd / && setpriv --reuid="$uid" --regid="$uid" --clear-groups \
        env -i PATH=/usr/bin:/bin HOME="$rt" USER="$user" LOGNAME="$user" LANG=C \
        XDG_RUNTIME_DIR="$rt" WAYLAND_DISPLAY=wayland-1 "$@")
}
printf 'output HEADLESS-1 resolution 800x600\n' >/run/user/sway.cfg
as_user env WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman \
    sway -c /run/user/sway.cfg >"$OUT/sway.log" 2>&1 &
for _ in $(seq 200); do [ -S "$rt/wayland-1" ] && break; sleep 0.05; done
[ -S "$rt/wayland-1" ] || { echo "sway did not start" >"$OUT/setup.result"; exit 1; }
# The seat's keyboard for the whole session (see above): 10 minutes of sleep, ended with the
# PID namespace.
as_user wtype -s 600000 >>"$OUT/wtype.log" 2>&1 &
for _ in $(seq 100); do grep -q "adding virtual keyboard" "$OUT/sway.log" 2>/dev/null && break; sleep 0.05; done
echo ok >"$OUT/setup.result"

# audit_rows: how many audit rows the store has for the user (the attempts made so far).
audit_rows() { bio log --user "$user" --limit 1000 --json | grep -o '"outcome"' | wc -l; }
# wait_rows N: until the store has N rows (an attempt fully decided), at most 20 s.
wait_rows() { for _ in $(seq 200); do [ "$(audit_rows)" -ge "$1" ] && return 0; sleep 0.1; done; return 1; }

lock_pid= lock_log=
# lock_start NAME: swaylock as the user (-d: it logs each PAM message and each refusal), until
# its surface holds the keyboard (at most 20 s).
lock_start() {
    lock_log=$OUT/$1.swaylock.log
    as_user env WAYLAND_DEBUG=1 swaylock -d >"$lock_log" 2>&1 &
    lock_pid=$!
    for _ in $(seq 200); do
        grep -q 'wl_keyboard@[0-9]*\.enter(' "$lock_log" 2>/dev/null && return 0
        kill -0 "$lock_pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# lock_result NAME: "unlocked" once swaylock exits 0 (at most 20 s), else "locked".
lock_result() {
    for _ in $(seq 200); do kill -0 "$lock_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$lock_pid" 2>/dev/null; then
        echo locked >"$OUT/$1.result"; kill "$lock_pid"; wait "$lock_pid" 2>/dev/null
    else
        wait "$lock_pid"; local rc=$?
        [ "$rc" -eq 0 ] && echo unlocked >"$OUT/$1.result" || echo "swaylock exited $rc" >"$OUT/$1.result"
    fi
}
# refused: the latest attempt was decided and swaylock refused it (it logs each refusal), while
# it still runs -- at most 20 s.
refusals() { grep -c 'pam_authenticate failed' "$lock_log" 2>/dev/null; }
wait_refused() { # BEFORE
    for _ in $(seq 200); do [ "$(refusals)" -gt "$1" ] && break; sleep 0.1; done
    [ "$(refusals)" -gt "$1" ] && kill -0 "$lock_pid" 2>/dev/null
}
type_enter() { as_user wtype "$1" -k Return >>"$OUT/wtype.log" 2>&1; }
enter() { as_user wtype -k Return >>"$OUT/wtype.log" 2>&1; }

# scenarios PREFIX: Enter then a touch, the PIN, the Unix password; a wrong PIN and a wrong
# password leave it locked, the Unix password then unlocks.
scenarios() {
    local p=$1 n
    if lock_start "$p-touch"; then enter; sandbox_touch "$finger" >>"$OUT/touch.log" 2>&1; lock_result "$p-touch"
    else echo "did not lock" >"$OUT/$p-touch.result"; fi
    if lock_start "$p-pin"; then type_enter "$pin"; lock_result "$p-pin"
    else echo "did not lock" >"$OUT/$p-pin.result"; fi
    if lock_start "$p-password"; then type_enter "$password"; lock_result "$p-password"
    else echo "did not lock" >"$OUT/$p-password.result"; fi
    if lock_start "$p-wrong"; then
        n=$(refusals); type_enter 0000
        if wait_refused "$n"; then echo locked >"$OUT/$p-wrong-pin.result"; else echo "not refused" >"$OUT/$p-wrong-pin.result"; fi
        n=$(refusals); type_enter "not-the-password"
        if wait_refused "$n"; then echo locked >"$OUT/$p-wrong-password.result"; else echo "not refused" >"$OUT/$p-wrong-password.result"; fi
        type_enter "$password"; lock_result "$p-wrong-then-password"
    else
        echo "did not lock" >"$OUT/$p-wrong-pin.result"
    fi
}

# ---- the project's pam.d/swaylock (touch_first=0), then Debian's own file (auth include login)
# over Debian's login and pam-auth-update's common-auth: prompt_first_services puts the prompt
# up at once there.
scenarios swaylock
cp "$SANDBOX_DIR/debian-pam.d/swaylock" "$SANDBOX_DIR/debian-pam.d/login" "$SANDBOX_DIR/debian-pam.d/common-auth" /etc/pam.d/
scenarios debian-swaylock
sock=$(ls "$rt"/sway-ipc.*.sock 2>/dev/null | head -1)
[ -n "$sock" ] && as_user env SWAYSOCK="$sock" swaymsg exit >/dev/null 2>&1
exit 0
