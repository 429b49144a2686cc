# shellcheck shell=bash
# x-session.sh: the X part of Tests/EndToEnd/lockers.sh, sourced INSIDE the sandbox (as root, in
# its private mount namespace) and inside a further `unshare --net --pid --fork --mount-proc`:
# a network namespace of its own keeps Xvfb's abstract socket private (no display number is
# shared with anyone; -nolisten unix: nothing in /tmp/.X11-unix), and the PID namespace ends
# Xvfb, the lockers and everything they started when this script ends, however it ends.
#
# (-noreset: the server would otherwise reset whenever its last client left, and refuse the next
# locker for a moment.)
#
# Runs each locker scenario and writes $OUT/NAME.result ("unlocked", "locked", or why not) for
# the outer script to check. Every wait is bounded. Args: USER UID UNIX-PASSWORD PIN FINGER
# XSECURELOCK-AUTH (the auth_x11 wrapper).
set -u
[ -n "${LOCKERS_DEBUG:-}" ] && set -x
user=$1 uid=$2 password=$3 pin=$4 finger=$5 xsl_auth=$6
OUT=$SANDBOX_DIR/out

Xvfb -displayfd 7 -nolisten tcp -nolisten unix -noreset -screen 0 800x600x24 7>"$OUT/display" 2>"$OUT/xvfb.log" &
for _ in $(seq 200); do [ -s "$OUT/display" ] && break; sleep 0.05; done
[ -s "$OUT/display" ] || { echo "Xvfb did not start" >"$OUT/setup.result"; exit 1; }
export DISPLAY=":$(cat "$OUT/display")"
echo ok >"$OUT/setup.result"

as_user() { # CMD...: as the locker's user, with a clean environment and this display (LANG: $lang)
    (cd / && setpriv --reuid="$uid" --regid="$uid" --clear-groups \
        env -i DISPLAY="$DISPLAY" PATH=/usr/bin:/bin HOME="$SANDBOX_DIR/home" USER="$user" LOGNAME="$user" LANG="$lang" "$@")
}
lang=C
# audit_rows: how many audit rows the store has for the user (the attempts made so far).
audit_rows() { bio log --user "$user" --limit 1000 --json | grep -o '"outcome"' | wc -l; }
# wait_rows N: until the store has N rows (an attempt fully decided), at most 20 s.
wait_rows() { for _ in $(seq 200); do [ "$(audit_rows)" -ge "$1" ] && return 0; sleep 0.1; done; return 1; }

# ---- i3lock: started as the user, it runs PAM as the user: the module goes through the checker.
i3lock_pid=
i3lock_start() {
    as_user i3lock -n >>"$OUT/i3lock.log" 2>&1 &
    i3lock_pid=$!
    # Keys typed before it holds the keyboard would go elsewhere: wait for its window.
    for _ in $(seq 200); do xdotool search --class i3lock >/dev/null 2>&1 && return 0; sleep 0.05; done
    return 1
}
# i3lock_result NAME: "unlocked" once i3lock exits 0 (at most 20 s), else "locked".
i3lock_result() {
    for _ in $(seq 200); do kill -0 "$i3lock_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$i3lock_pid" 2>/dev/null; then
        echo locked >"$OUT/$1.result"; kill "$i3lock_pid"; wait "$i3lock_pid" 2>/dev/null
    else
        wait "$i3lock_pid"; [ $? -eq 0 ] && echo unlocked >"$OUT/$1.result" || echo "i3lock failed" >"$OUT/$1.result"
    fi
}

# Enter on the empty field, then a touch: the checker's prompt gets "", the reader waits behind it.
i3lock_start; xdotool key Return; sandbox_touch "$finger" >>"$OUT/touch.log" 2>&1; i3lock_result i3lock-touch
# The PIN, typed.
i3lock_start; xdotool type --delay 20 "$pin"; xdotool key Return; i3lock_result i3lock-pin
# The Unix password, typed: handed on by the module, checked by pam_unix (unix_chkpwd).
i3lock_start; xdotool type --delay 20 "$password"; xdotool key Return; i3lock_result i3lock-password
# A wrong PIN (still locked once the attempt is decided), then the Unix password.
rows=$(audit_rows)
i3lock_start; xdotool type --delay 20 0000; xdotool key Return
if wait_rows $((rows + 1)) && kill -0 "$i3lock_pid" 2>/dev/null; then echo locked >"$OUT/i3lock-wrong.result"; else echo "unlocked by a wrong PIN?" >"$OUT/i3lock-wrong.result"; fi
xdotool type --delay 20 "$password"; xdotool key Return; i3lock_result i3lock-wrong-then-password

# ---- xscreensaver: its setuid auth helper drops to the user before pam_start, so the module
# goes through the checker too. Its dialog shows one page per PAM conversation call and returns
# only when the user presses Enter: first the touch request (touch_first seconds of reader alone
# behind it), then the PIN-or-password prompt.
xss_log=$OUT/xscreensaver.log
as_user xscreensaver -no-splash -verbose >"$xss_log" 2>&1 &
xss_locked() { as_user xscreensaver-command -time 2>/dev/null | grep -q "screen locked"; }
xss_count() { local n; n=$(grep -c "$1" "$xss_log" 2>/dev/null); echo "${n:-0}"; }   # 0 before the log exists
# The daemon answers commands once it is up (the first lock must not race its start).
for _ in $(seq 200); do as_user xscreensaver-command -time >/dev/null 2>&1 && break; sleep 0.1; done
# xss_wait_for PATTERN BEFORE: until the log has more PATTERN lines than BEFORE (at most 20 s),
# pressing Shift meanwhile: that brings the dialog up without typing anything into it (XTEST
# pointer motion does not, under Xvfb).
xss_wait_for() {
    for _ in $(seq 100); do
        [ "$(xss_count "$1")" -gt "$2" ] && return 0
        xdotool key shift
        sleep 0.2
    done
    return 1
}
# xss_ready: until the dialog takes keys -- Shift, which types nothing, is pressed until the
# dialog logs a key press after its latest page came up (keys typed before that are lost).
xss_ready() {
    local keys
    for _ in $(seq 100); do
        keys=$(sed -n '/pam_conversation (/h; /pam_conversation (/!H; ${x;p}' "$xss_log" | grep -c 'XI RawKeyPress')
        [ "$keys" -gt 0 ] && return 0
        xdotool key shift
        sleep 0.1
    done
    return 1
}
xss_lock() {
    for _ in $(seq 100); do as_user xscreensaver-command -lock >/dev/null 2>&1 && break; sleep 0.1; done
    for _ in $(seq 100); do xss_locked && break; sleep 0.1; done
    xss_locked
}
xss_result() { # NAME: "unlocked" once the screen is (at most 20 s), else "locked"
    for _ in $(seq 200); do xss_locked || break; sleep 0.1; done
    if xss_locked; then echo locked >"$OUT/$1.result"; else echo unlocked >"$OUT/$1.result"; fi
}
# xss_enter: Enter on the page shown, pressed again (at most 5 times) until the dialog says it
# took the page's input: its first keys can be lost while a page is being made, and another
# page only comes after this one was taken, so a second Enter never lands on the next one.
xss_enter() {
    local taken
    taken=$(xss_count 'authentication input finished')
    for _ in 1 2 3 4 5; do
        xdotool key Return
        for _ in $(seq 20); do [ "$(xss_count 'authentication input finished')" -gt "$taken" ] && return 0; sleep 0.1; done
    done
    return 1
}
# xss_type NAME TEXT: Enter on the touch request page, then TEXT at the prompt page (the pages'
# texts as biounlock words them in $lang: $touch_text, $prompt_text).
touch_text='TEXT_INFO="Touch the fingerprint reader' prompt_text='ECHO_OFF="PIN or password'
xss_type() {
    local infos prompts
    infos=$(xss_count "$touch_text") prompts=$(xss_count "$prompt_text")
    xss_lock || { echo "did not lock" >"$OUT/$1.result"; return; }
    xss_wait_for "$touch_text" "$infos" && xss_ready && xss_enter
    if xss_wait_for "$prompt_text" "$prompts" && xss_ready; then
        sleep 0.5   # (the page being made; see xss_enter)
        xdotool type --delay 30 "$2"
        xss_enter
    fi
    xss_result "$1"
}
xss_type xscreensaver-pin "$pin"
xss_type xscreensaver-password "$password"
# A touch while the touch request is shown, then Enter.
infos=$(xss_count 'TEXT_INFO="Touch the fingerprint reader')
if xss_lock; then
    xss_wait_for 'TEXT_INFO="Touch the fingerprint reader' "$infos" && sandbox_touch "$finger" >>"$OUT/touch.log" 2>&1 && xss_ready && xss_enter
    xss_result xscreensaver-touch
else
    echo "did not lock" >"$OUT/xscreensaver-touch.result"
fi
as_user xscreensaver-command -exit >/dev/null 2>&1

# ---- xscreensaver in Simplified Chinese: the checker speaks the locker's language (the module
# relays its locale; the checker's config names the catalogs).
for _ in $(seq 100); do pgrep -x xscreensaver >/dev/null || break; sleep 0.1; done
lang=zh_CN.UTF-8
touch_text='TEXT_INFO="请触摸指纹读取器以进行 解锁屏幕 认证"' prompt_text='ECHO_OFF="PIN 码或密码（解锁屏幕），或触摸指纹读取器后按回车键："'
xss_log=$OUT/xscreensaver-zh.log
as_user xscreensaver -no-splash -verbose >"$xss_log" 2>&1 &
for _ in $(seq 200); do as_user xscreensaver-command -time >/dev/null 2>&1 && break; sleep 0.1; done
xss_type xscreensaver-zh-pin "$pin"
as_user xscreensaver-command -exit >/dev/null 2>&1

# ---- i3lock as Debian ships it (issue 33): its own /etc/pam.d/i3lock (`auth include login`),
# Debian's login, and the common-auth Debian's real pam-auth-update writes with biounlock's
# profile -- no touch_first=0 anywhere: prompt_first_services puts the prompt up at once. Last,
# so that no other locker meets this common-auth.
lang=C
cp "$SANDBOX_DIR/debian-pam.d/i3lock" "$SANDBOX_DIR/debian-pam.d/login" "$SANDBOX_DIR/debian-pam.d/common-auth" /etc/pam.d/
i3lock_start; xdotool key Return; sandbox_touch "$finger" >>"$OUT/touch.log" 2>&1; i3lock_result debian-i3lock-touch
i3lock_start; xdotool type --delay 20 "$pin"; xdotool key Return; i3lock_result debian-i3lock-pin
i3lock_start; xdotool type --delay 20 "$password"; xdotool key Return; i3lock_result debian-i3lock-password

# ---- xsecurelock as Debian ships it (issue 33): no pam.d file of its own -- its authproto_pam
# runs as the user and calls pam_start("common-auth") (Debian builds it so), with PAM_TTY the
# display and PAM_RHOST "localhost"; the account and password groups come from Debian's `other`.
# It shows every conversation message ("PAM says" for a second, or until a key) and its prompt
# takes the keys typed meanwhile (they wait in its pipe), so it is asked as a dialog: the touch
# request, touch_first seconds of reader alone, then the prompt. A failed pam_authenticate is
# run again (up to three times) before it gives up, with the prompt again.
# XSECURELOCK_AUTH runs its auth_x11 under strace (the name must start with auth_): its reads of
# authproto_pam's packets are the texts the user sees, in $xsl_log.
cp "$SANDBOX_DIR/debian-pam.d/other" "$SANDBOX_DIR/debian-pam.d/common-account" "$SANDBOX_DIR/debian-pam.d/common-password" \
    "$SANDBOX_DIR/debian-pam.d/common-session" /etc/pam.d/
xsl_log=$OUT/xsecurelock.log xsl_pid=
xsl_touch='"Touch the fingerprint reader to authenticate for unlocking the screen"'
xsl_prompt='"PIN or password for unlocking the screen, or touch the reader, then press Enter: "'
xsl_count() { local n; n=$(grep -c -F "$1" "$xsl_log" 2>/dev/null); echo "${n:-0}"; }
# xsl_wait_for TEXT BEFORE: until the log has more TEXT lines than BEFORE (at most 20 s).
xsl_wait_for() { for _ in $(seq 200); do [ "$(xsl_count "$1")" -gt "$2" ] && return 0; sleep 0.1; done; return 1; }
# xsl_start: locked, then woken: Shift (which types nothing) until its auth_x11 has started
# authproto_pam; the key that wakes it is discarded anyway. Returns once the touch request is up.
xsl_start() {
    local infos
    infos=$(xsl_count "$xsl_touch")
    as_user env XSECURELOCK_AUTH="$xsl_auth" xsecurelock >>"$xsl_log" 2>&1 &
    xsl_pid=$!
    for _ in $(seq 200); do pgrep -x authproto_pam >/dev/null && break; xdotool key shift; sleep 0.1; done
    xsl_wait_for "$xsl_touch" "$infos"
}
# xsl_result NAME: "unlocked" once xsecurelock exits 0 (at most 20 s), else "locked".
xsl_result() {
    for _ in $(seq 200); do kill -0 "$xsl_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$xsl_pid" 2>/dev/null; then
        # (This PID namespace holds only what this script started: the one xsecurelock is this one.)
        echo locked >"$OUT/$1.result"; kill $(pgrep -x xsecurelock) 2>/dev/null; wait "$xsl_pid" 2>/dev/null
    else
        wait "$xsl_pid"; [ $? -eq 0 ] && echo unlocked >"$OUT/$1.result" || echo "xsecurelock failed" >"$OUT/$1.result"
    fi
    for _ in $(seq 100); do pgrep -x xsecurelock >/dev/null || break; sleep 0.1; done
}
# A touch while the touch request is up: no key but the one that woke it.
if xsl_start; then sandbox_touch "$finger" >>"$OUT/touch.log" 2>&1; fi; xsl_result xsecurelock-touch
# The Unix password typed at once, while the touch request is up: the prompt takes it when it comes.
if xsl_start; then
    xdotool type --delay 20 "$password"; xdotool key Return; echo "xsecurelock-password: Enter at $(date +%s.%N)" >>"$xsl_log"
fi
xsl_result xsecurelock-password; echo "xsecurelock-password: ended at $(date +%s.%N)" >>"$xsl_log"
# The PIN, typed at the prompt.
prompts=$(xsl_count "$xsl_prompt")
if xsl_start && xsl_wait_for "$xsl_prompt" "$prompts"; then xdotool type --delay 20 "$pin"; xdotool key Return; fi
xsl_result xsecurelock-pin
# A wrong PIN: the stack fails, xsecurelock runs it again (still locked: the touch request and
# the prompt once more); the Unix password typed there unlocks.
prompts=$(xsl_count "$xsl_prompt")
if xsl_start && xsl_wait_for "$xsl_prompt" "$prompts"; then
    infos=$(xsl_count "$xsl_touch")
    xdotool type --delay 20 0000; xdotool key Return
    if xsl_wait_for "$xsl_touch" "$infos" && kill -0 "$xsl_pid" 2>/dev/null; then
        echo locked >"$OUT/xsecurelock-wrong.result"
        xsl_wait_for "$xsl_prompt" $((prompts + 1)) && { xdotool type --delay 20 "$password"; xdotool key Return; }
    else
        echo "no second attempt after a wrong PIN" >"$OUT/xsecurelock-wrong.result"
    fi
fi
xsl_result xsecurelock-wrong-then-password
exit 0
