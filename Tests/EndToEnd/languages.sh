#!/usr/bin/env bash
# End-to-end: biounlock in the user's language.
#   1. the catalogs: po/biounlock.pot is what the sources give and every po/LANG.po is complete,
#      passes msgfmt --check and keeps every {placeholder} (scripts/po check); scripts/build
#      compiled each into build/locale;
#   2. the REAL /usr/bin/sudo in a private mount namespace (scripts/lib/sandbox.sh), run by a
#      user whose LANG is zh_CN.UTF-8, zh_TW.UTF-8, de_DE.UTF-8, C, or a language without a
#      catalog (locales from Debian's locales-all): sudo sets its locale, the module reads it and
#      shows the touch request and the fallback prompt in that language; a damaged catalog
#      changes nothing but the language.
#
#   bash Tests/EndToEnd/languages.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# Prints one "ok - ..." / "not ok - ..." line per check and ends with "N passed, N failed".
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=../../scripts/lib/sandbox.sh
source "$repo/scripts/lib/sandbox.sh"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"

tmp="$(mktemp -d /tmp/biounlock-languages.XXXXXX)"
trap 'sandbox_destroy; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

# ---- 1. the catalogs ----
"$repo/scripts/po" check >"$tmp/po-check.log" 2>&1
check "scripts/po check: po/biounlock.pot matches the sources; every catalog complete, msgfmt --check clean, placeholders kept" \
    test $? -eq 0 -- "$tmp/po-check.log"
for po in "$repo"/po/*.po; do
    lang="$(basename "$po" .po)"
    stats="$(LC_ALL=C msgfmt --check --statistics -o /dev/null "$po" 2>&1)"
    # shellcheck disable=SC2016
    check "po/$lang.po: msgfmt --check --statistics says complete ($stats)" \
        eval '[[ "$stats" =~ ^[0-9]+\ translated\ messages\.$ ]]'
    check "build/locale/$lang/LC_MESSAGES/biounlock.mo is the compiled po/$lang.po" \
        eval 'msgfmt -o "$tmp/$lang.mo" "$po" && cmp -s "$tmp/$lang.mo" "$BUILD_DIR/locale/$lang/LC_MESSAGES/biounlock.mo"'
done
# grep reads the whole list (no -q): stopping at the first match would kill locale -a with
# SIGPIPE, and pipefail would fail the check now and then.
for locale in zh_CN.UTF-8 zh_TW.UTF-8 de_DE.UTF-8 it_IT.UTF-8; do
    check "the locale $locale exists (locales-all; run ./scripts/deps)" \
        eval 'locale -a 2>/dev/null | grep -ix "$(echo "$locale" | sed "s/UTF-8/utf8/")" >/dev/null'
done

# ---- 2. real sudo in other languages ----
ALICE=bioalice ALICE_UID=4242 ALICE_UNIX_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=alice-right-index

etc_before="$(sandbox_etc_fingerprint)"
if ! sandbox_create; then
    fail "sandbox: set up (root, unshare, setpriv, setuid sudo, a build in $BUILD_DIR)"
    finish
fi
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_UNIX_PW"
# The catalogs of the build (locale_dir= is read only from root-owned configuration: this
# pam.d line); a copy with one catalog truncated for the damaged case.
cp -a "$BUILD_DIR/locale" "$SANDBOX_DIR/locale-damaged"
mo="$SANDBOX_DIR/locale-damaged/zh_CN/LC_MESSAGES/biounlock.mo"
head -c "$(( $(stat -c %s "$mo") / 2 ))" "$mo" >"$mo.half" && mv "$mo.half" "$mo"
SANDBOX_MODULE_ARGS="require_passcode=none locale_dir=$SANDBOX_BUILD/locale" sandbox_write_config
cp "$SANDBOX_DIR/etc/pam.d/sudo" "$SANDBOX_DIR/etc/pam.d/sudo-damaged"
sed -i "s|locale_dir=$SANDBOX_BUILD/locale|locale_dir=$SANDBOX_DIR/locale-damaged|" "$SANDBOX_DIR/etc/pam.d/sudo-damaged"
out="$SANDBOX_DIR/out"
mkdir -m 0700 "$out"

sandbox_run '
    {
        sandbox_enrol "$1" "$2" right-index &&
        printf "%s\n" "$3" | bio passcode set "$1" --stdin &&
        bio enable "$1"
    } >"$4/setup.log" 2>&1
' "$ALICE" "$ALICE_FINGER" "$ALICE_PIN" "$out"
setup_rc=$?
check "setup: $ALICE enrols a finger, sets a PIN and enables biometric unlock" test "$setup_rc" -eq 0 -- "$out/setup.log"
if [ "$setup_rc" -ne 0 ]; then finish; fi

# run_sudo NAME LANG STACK STDIN-TEXT [TOUCH-ID...]: $ALICE runs `sudo -S -k id -u` (no terminal:
# the touch request, then the PIN-or-password prompt) in the locale LANG, with the pam.d file
# STACK as sudo's, while a background root process touches the simulated reader.
run_sudo() {
    local name=$1 lang=$2 stack=$3 input=$4; shift 4
    printf '%s' "$input" >"$out/$name.in"
    sandbox_run '
        name=$1 lang=$2 stack=$3; shift 3
        o="$SANDBOX_DIR/out/$name"
        [ "$stack" = sudo ] || mount --bind "/etc/pam.d/$stack" /etc/pam.d/sudo
        if [ $# -gt 0 ]; then SANDBOX_TOUCH_LOG="$o.touch" sandbox_touch_bg "$@"; fi
        SANDBOX_LANG=$lang sandbox_as "$ALICE" /usr/bin/sudo -S -k id -u <"$o.in" >"$o.out" 2>"$o.err"
        echo $? >"$o.rc"
        sandbox_touch_end 3
    ' "$name" "$lang" "$stack" "$@"
    cat "$out/$name.out" "$out/$name.err" >"$out/$name.all" 2>/dev/null
}
export ALICE
ran_as_root() { [ "$(cat "$out/$1.rc" 2>/dev/null)" = 0 ] && grep -qx 0 "$out/$1.out"; }
saw() { grep -qF -- "$2" "$out/$1.all"; }
show() { echo "$out/$1.rc" "$out/$1.all" "$out/$1.touch"; }

# language | touch request | fallback prompt | a wrong finger (2 tries left)
while IFS='|' read -r lang touch prompt wrong; do
    name="${lang%%.*}"
    run_sudo "$name-touch" "$lang" sudo "" "$ALICE_FINGER"
    # shellcheck disable=SC2046
    check "$lang: a touch lets sudo succeed; the touch request read '$touch'" \
        eval 'ran_as_root "$name-touch" && saw "$name-touch" "$touch"' -- $(show "$name-touch")
    run_sudo "$name-pin" "$lang" sudo "$ALICE_PIN"$'\n' mallory mallory mallory
    # shellcheck disable=SC2046
    check "$lang: after 3 wrong fingers ('$wrong') the PIN at '$prompt' lets sudo succeed" \
        eval 'ran_as_root "$name-pin" && saw "$name-pin" "$wrong" && saw "$name-pin" "$prompt"' -- $(show "$name-pin")
done <<'EOF'
zh_CN.UTF-8|请触摸指纹读取器以进行 运行 root 命令 认证|PIN 码或密码（运行 root 命令）：|指纹无法识别，还剩 2 次机会。
zh_TW.UTF-8|請觸碰指紋讀取器以進行 執行 root 指令 驗證|PIN 碼或密碼（執行 root 指令）：|無法辨識指紋，還有 2 次機會。
de_DE.UTF-8|Berühren Sie den Fingerabdruckleser, um sich für das Ausführen eines Befehls als root zu authentifizieren|PIN oder Passwort für das Ausführen eines Befehls als root: |Fingerabdruck nicht erkannt. Noch 2 Versuche.
C|Touch the fingerprint reader to authenticate for running a command as root|PIN or password for running a command as root: |Fingerprint not recognised. 2 tries left.
it_IT.UTF-8|Touch the fingerprint reader to authenticate for running a command as root|PIN or password for running a command as root: |Fingerprint not recognised. 2 tries left.
EOF
check "zh_CN and zh_TW: two catalogs, two texts" \
    eval '[ -s "$out/zh_CN-touch.all" ] && ! cmp -s "$out/zh_CN-touch.all" "$out/zh_TW-touch.all"' -- "$out/zh_CN-touch.all" "$out/zh_TW-touch.all"

# A truncated zh_CN catalog (glibc would crash on some truncations): English, and the same result.
run_sudo damaged zh_CN.UTF-8 sudo-damaged "$ALICE_PIN"$'\n' mallory mallory mallory
# shellcheck disable=SC2046
check "a truncated catalog: the same sudo succeeds with the PIN, in English ('PIN or password for running a command as root: ')" \
    eval 'ran_as_root damaged && saw damaged "PIN or password for running a command as root: " && saw damaged "Fingerprint not recognised. 2 tries left."' \
    -- $(show damaged)

# ---- the host's /etc ----
etc_after="$(sandbox_etc_fingerprint)"
check "host: /etc/passwd, /etc/group, /etc/shadow, /etc/sudoers and /etc/pam.d are byte-identical afterwards" \
    test "$etc_before" = "$etc_after"
finish
