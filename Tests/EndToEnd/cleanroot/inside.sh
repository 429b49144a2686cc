#!/bin/bash
# inside.sh: the clean-root scenarios, run as root INSIDE the clean Debian 12 root by
# Tests/EndToEnd/cleanroot.sh (chrooted, private mount and PID namespaces). Expects
# /root/biounlock.deb and this directory at /root/e2e; writes transcripts to /root/out.
# Prints one "ok - ..." / "not ok - ..." line per check (the caller counts them).
# shellcheck disable=SC2046  # $(files NAME) and $(as USER) are meant to split into words
set -u
export DEBIAN_FRONTEND=noninteractive
e2e=/root/e2e out=/root/out
mkdir -p "$out"
cd /root || exit 1

ALICE=bioalice ALICE_PW='alice-Unix-pw-7' BOB=biobob BOB_PW='bob-Unix-pw-9'
PIN=2468 FINGER=bioalice-right-index WRONG=mallory
SECURITY=/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/security
[ -d "$SECURITY" ] || SECURITY=/lib/x86_64-linux-gnu/security

# pass, fail, check: the end-to-end scripts' own (Tests/EndToEnd/lib/checks.bash, installed here).
# shellcheck source=../lib/checks.bash
source "$e2e/checks.bash"
# pam_same [EXCEPT]: every common-* file saved before the package equals /etc/pam.d's (but EXCEPT).
pam_same() { # pam_same [NAME...]: every file but NAME... is as before
    local f n skip
    for f in "$out"/pam.orig/*; do
        skip=0
        for n in "$@"; do [ "${f##*/}" = "$n" ] && skip=1; done
        [ "$skip" = 1 ] && continue
        cmp -s "$f" "/etc/pam.d/${f##*/}" || return 1
    done
}
# Stop here: the rest would only repeat the same failure.
must() { [ "$failed" -eq 0 ] || { echo "# stopping: a step the rest depends on failed"; exit 1; }; }

# ---------------------------------------------------------------- the clean root
check "clean root: Debian 12 ($(cat /etc/debian_version)), biounlock not installed" \
    eval 'grep -q "^12" /etc/debian_version && ! dpkg -s biounlock >/dev/null 2>&1'
check "clean root: no Swift toolchain or runtime (/opt/swift, swift, libswiftCore.so)" \
    eval '[ ! -e /opt/swift ] && ! command -v swift >/dev/null && [ -z "$(find / -xdev -name "libswiftCore.so*" -print -quit 2>/dev/null)" ]'
mkdir -p "$out/pam.orig"
cp -p /etc/pam.d/common-* "$out/pam.orig/"

# ---------------------------------------------------------------- install the .deb
apt-get install -y --no-install-recommends /root/biounlock.deb >"$out/apt-install.log" 2>&1
check "install: apt-get install ./biounlock_*.deb succeeds (dependencies from the archive)" test $? -eq 0 -- "$out/apt-install.log"
must
check "install: dpkg reports biounlock installed" \
    eval 'dpkg-query -W -f="\${Status}" biounlock | grep -qx "install ok installed"'
ldd "$SECURITY/pam_biounlock.so" >"$out/ldd-module.txt" 2>&1; ldd /usr/bin/biounlock >"$out/ldd-cli.txt" 2>&1
ldd /usr/libexec/biounlock/biounlock-check >"$out/ldd-check.txt" 2>&1; ldd /usr/libexec/biounlock/biounlockd >"$out/ldd-service.txt" 2>&1
check "install: $SECURITY/pam_biounlock.so, /usr/bin/biounlock, the checker and biounlockd resolve every library (ldd: no 'not found', no swift)" \
    eval '! grep -qiE "not found|swift" "$out/ldd-module.txt" "$out/ldd-cli.txt" "$out/ldd-check.txt" "$out/ldd-service.txt"' -- "$out/ldd-module.txt" "$out/ldd-cli.txt" "$out/ldd-check.txt" "$out/ldd-service.txt"
check "install: /usr/libexec/biounlock/biounlock-check is setuid root (root:root 4755) in root-owned 0755 directories" \
    eval '[ "$(stat -c "%U:%G %a" /usr/libexec/biounlock/biounlock-check)" = "root:root 4755" ] && [ "$(stat -c "%U %a" /usr/libexec/biounlock)" = "root 755" ]'
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/libexec/biounlock/biounlock-check --help >"$out/check-by-hand.log" 2>&1 3<&-
check_rc=$?
check "install: the checker run by hand (by nobody, without its socket) says what it is and exits 64" \
    eval '[ "$check_rc" -eq 64 ] && grep -q "talks only to the module on fd 3" "$out/check-by-hand.log"' -- "$out/check-by-hand.log"
biounlock --help >"$out/help.txt" 2>&1
check "install: biounlock --help runs without the toolchain" test $? -eq 0 -- "$out/help.txt"
# sensor=fprintd's helper: libc and libm only, and it runs (its usage, from its arguments).
ldd /usr/libexec/biounlock/biounlock-fprintd >"$out/ldd-fprintd.txt" 2>&1
/usr/libexec/biounlock/biounlock-fprintd >"$out/fprintd-helper.log" 2>&1
fprintd_helper_rc=$?
check "install: /usr/libexec/biounlock/biounlock-fprintd needs only libc and libm, and runs (exit 64, its usage)" \
    eval '! grep -qiE "not found|swift|fprint|glib|gio|dbus|systemd|stdc|gcc_s" "$out/ldd-fprintd.txt" && [ "$fprintd_helper_rc" -eq 64 ] && grep -q "not for interactive use" "$out/fprintd-helper.log"' \
    -- "$out/ldd-fprintd.txt" "$out/fprintd-helper.log"
# The module links SQLite in; the package names the sqlite3 it was built with, and doctor compares
# that with the libsqlite3-0 installed (the same here: the root has this machine's archive).
biounlock doctor >"$out/doctor-sqlite.txt" 2>&1
sqlite_built="$(dpkg-query -W -f='${Built-Using}' biounlock | sed -n 's/.*sqlite3 (= \([^)]*\)).*/\1/p')"
check "install: the package says Built-Using: sqlite3 (= $sqlite_built) and doctor finds the same libsqlite3-0 installed" \
    eval '[ -n "$sqlite_built" ] && grep -qF "ok       sqlite: pam_biounlock.so has SQLite $sqlite_built linked in" "$out/doctor-sqlite.txt"' -- "$out/doctor-sqlite.txt"
check "install: /var/lib/biounlock exists, root, 0700" test "$(stat -c '%U %a' /var/lib/biounlock 2>&1)" = "root 700"
check "install: /etc/security/biounlock.conf is a conffile, root, 0644" \
    eval '[ "$(stat -c "%U %a" /etc/security/biounlock.conf)" = "root 644" ] && dpkg-query -W -f="\${Conffiles}" biounlock | grep -q /etc/security/biounlock.conf'
check "install: man pages biounlock(8), pam_biounlock(8), biounlock.conf(5) and the pam-auth-update profile" \
    test -f /usr/share/man/man8/biounlock.8.gz -a -f /usr/share/man/man8/pam_biounlock.8.gz -a -f /usr/share/man/man5/biounlock.conf.5.gz -a -f /usr/share/pam-configs/biounlock
check "install: biounlock --version is the package's version ($(dpkg-query -W -f='${Version}' biounlock))" \
    eval '[ "$(biounlock --version)" = "biounlock $(dpkg-query -W -f="\${Version}" biounlock)" ]'
# The shell completions; bash-completion is not in this root, so the function is called as
# bash-completion would (COMP_WORDS, COMP_CWORD).
check "install: bash completion at /usr/share/bash-completion/completions/biounlock completes 'biounlock sta' to status" \
    eval '[ "$(bash -c "source /usr/share/bash-completion/completions/biounlock; COMP_WORDS=(biounlock sta); COMP_CWORD=1; _biounlock; echo \${COMPREPLY[*]}")" = status ]'
check "install: zsh completion at /usr/share/zsh/vendor-completions/_biounlock" \
    eval '[ "$(stat -c "%U %a" /usr/share/zsh/vendor-completions/_biounlock)" = "root 644" ] && head -1 /usr/share/zsh/vendor-completions/_biounlock | grep -qx "#compdef biounlock"'
check "install: the translations at /usr/share/locale/{zh_CN,zh_TW,ja,de,fr,es}/LC_MESSAGES/biounlock.mo" \
    eval 'for l in zh_CN zh_TW ja de fr es; do [ -s /usr/share/locale/$l/LC_MESSAGES/biounlock.mo ] || exit 1; done'
check "install: the profile is off after installing (common-* byte for byte as before)" pam_same
check "install: biounlockd with its unit, D-Bus activation file, bus policy and interface, polkit actions, and /etc/pam.d/biounlock-reauth as a conffile" \
    eval '[ -x /usr/libexec/biounlock/biounlockd ] && [ -f /lib/systemd/system/biounlockd.service ] && [ -f /usr/share/dbus-1/system-services/org.biounlock.Manager1.service ] \
          && [ -f /usr/share/dbus-1/system.d/org.biounlock.Manager1.conf ] && [ -f /usr/share/dbus-1/interfaces/org.biounlock.Manager1.xml ] \
          && [ -f /usr/share/polkit-1/actions/org.biounlock.policy ] && dpkg-query -W -f="\${Conffiles}" biounlock | grep -q /etc/pam.d/biounlock-reauth'
/usr/libexec/biounlock/biounlockd --version >"$out/service-version.txt" 2>&1
check "install: biounlockd runs without the toolchain (--version)" grep -q "^biounlockd " "$out/service-version.txt" -- "$out/service-version.txt"

# ---------------------------------------------------------------- pam-auth-update
pam-auth-update --enable biounlock >"$out/pam-enable.log" 2>&1
check "pam-auth-update --enable biounlock exits 0" test $? -eq 0 -- "$out/pam-enable.log"
cp /etc/pam.d/common-auth "$out/common-auth.enabled"
check "enabled: common-auth has biounlock's line with success=end turned into a jump over pam_unix" \
    grep -qP '^auth\t\[success=2 ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die\]\tpam_biounlock\.so' /etc/pam.d/common-auth \
    -- "$out/common-auth.enabled"
check "enabled: pam_biounlock.so comes right before pam_unix.so, and the jump lands on pam_permit" \
    eval 'awk "/^auth/ { n++; m[n] = \$0 } END { for (i = 1; i <= n; i++) if (m[i] ~ /pam_biounlock/) { exit !(m[i+1] ~ /pam_unix/ && m[i+3] ~ /pam_permit/) } exit 1 }" /etc/pam.d/common-auth' \
    -- "$out/common-auth.enabled"
check "enabled: common-account has the profile's account line (the Unix password's witness for callers without pam_setcred)" \
    grep -qP "^account\t+optional\t+pam_biounlock\\.so\\s*\$" /etc/pam.d/common-account -- /etc/pam.d/common-account
check "enabled: only common-auth and common-account changed" pam_same common-auth common-account
pam-auth-update --disable biounlock >"$out/pam-disable.log" 2>&1
check "pam-auth-update --disable biounlock restores every common-* file byte for byte" pam_same -- "$out/pam-disable.log"
pam-auth-update --enable biounlock >>"$out/pam-enable.log" 2>&1
check "pam-auth-update --enable biounlock again gives the same common-auth" cmp -s "$out/common-auth.enabled" /etc/pam.d/common-auth
# The keyring line (issue 32): its own profile puts keep_password in the Additional block, after
# the jump target pam_permit, so it runs once the password module accepted the password (and,
# in gdm-password, before pam_gnome_keyring); off again, common-auth is as with biounlock alone.
pam-auth-update --enable biounlock-keyring >"$out/pam-keyring.log" 2>&1
cp /etc/pam.d/common-auth "$out/common-auth.keyring"
check "keyring profile: 'auth optional pam_biounlock.so keep_password' comes after pam_unix and pam_permit" \
    eval 'awk "/^auth/ { n++; if (\$0 ~ /pam_unix/) u = n; if (\$0 ~ /pam_permit/) p = n; if (\$0 ~ /^auth\t+optional\t+pam_biounlock\.so keep_password\$/) k = n } END { exit !(u && p && k > p && p > u) }" /etc/pam.d/common-auth' \
    -- "$out/common-auth.keyring" "$out/pam-keyring.log"
pam-auth-update --disable biounlock-keyring >>"$out/pam-keyring.log" 2>&1
check "keyring profile off again: common-auth as with biounlock alone" cmp -s "$out/common-auth.enabled" /etc/pam.d/common-auth -- "$out/pam-keyring.log"
must

# ---------------------------------------------------------------- users and the simulated sensor
{
    useradd -m -s /bin/bash "$ALICE" && useradd -m -s /bin/bash "$BOB" &&
    printf '%s:%s\n%s:%s\n' "$ALICE" "$ALICE_PW" "$BOB" "$BOB_PW" | chpasswd &&
    printf '%s ALL=(ALL:ALL) ALL\n' "$ALICE" >/etc/sudoers.d/biounlock-test && chmod 0440 /etc/sudoers.d/biounlock-test &&
    grep -q "$(hostname)" /etc/hosts || echo "127.0.1.1 $(hostname)" >>/etc/hosts
} >"$out/users.log" 2>&1
check "setup: users $ALICE (a sudoer) and $BOB with Unix passwords" eval 'id "$ALICE" >/dev/null && id "$BOB" >/dev/null' -- "$out/users.log"

cat >/etc/security/biounlock.conf <<CONF
# clean-root test: the simulated sensor
policy = biometrics-or-passcode
sensor = simulated
sim_socket = /run/biounlock-sim/sensor
timeout = 15
max_tries = 3
CONF
install -d -m 0700 -o root -g root /run/biounlock-sim
{
    biounlock enrol "$ALICE" --finger right-index --timeout 30 &
    enrol=$!
    for _ in 1 2 3 4 5; do biounlock sim scan "$FINGER" --wait 10 || break; done
    wait "$enrol"
} >"$out/enrol.log" 2>&1
check "setup: biounlock enrol $ALICE --finger right-index with 5 x 'biounlock sim scan $FINGER'" \
    grep -q "Enrolled right-index-finger for $ALICE" "$out/enrol.log" -- "$out/enrol.log"
echo "$PIN" | biounlock passcode set "$ALICE" --stdin >"$out/passcode.log" 2>&1
check "setup: echo $PIN | biounlock passcode set $ALICE --stdin" test $? -eq 0 -- "$out/passcode.log"
biounlock enable "$ALICE" >"$out/enable.log" 2>&1
check "setup: biounlock enable $ALICE" test $? -eq 0 -- "$out/enable.log"
must

biounlock doctor >"$out/doctor.log" 2>&1
check "setup: biounlock doctor finds no problem with the pam-auth-update stack and the package's files" \
    test $? -eq 0 -- "$out/doctor.log"
check "setup: biounlock doctor finds the checker setuid root, root-owned all the way up" \
    grep -q "^ok .*checker: /usr/libexec/biounlock/biounlock-check: setuid root" "$out/doctor.log" -- "$out/doctor.log"

# ---------------------------------------------------------------- scenarios
# drive NAME FINGERS PIN PASSWORD MARK SHELLCMD COMMAND...: one terminal session (drive.exp);
# leaves $out/NAME.log (transcript) and $out/NAME.rc.
drive() {
    local name=$1; shift
    timeout -k 5 60 expect -f "$e2e/drive.exp" "$out/$name.log" "$@"
    echo $? >"$out/$name.rc"
}
# as USER COMMAND...: COMMAND as USER with a clean environment, on the caller's terminal
# (AS_LANGUAGE: a LANGUAGE for it; the root has only the C.UTF-8 locale, where gettext honours it).
as() {
    local user=$1; shift
    echo setpriv --reuid="$user" --regid="$user" --init-groups \
        env -i PATH=/usr/bin:/bin HOME="/home/$user" USER="$user" LOGNAME="$user" TERM=xterm LANG=C.UTF-8 \
        ${AS_LANGUAGE:+LANGUAGE=$AS_LANGUAGE} "$@"
}
rc() { cat "$out/$1.rc" 2>/dev/null || echo missing; }
saw() { sed 's/\r//g' "$out/$1.log" 2>/dev/null | grep -qF -- "$2"; }
not_saw() { ! saw "$1" "$2"; }
files() { echo "$out/$1.log" "$out/$1.rc" "$out/$1.log.scans"; }

login_cmd=(login "$ALICE")
# shellcheck disable=SC2016
login_shell='echo RESULT-login=$(id -un); exit'
# run_as SERVICE NAME FINGERS PIN PASSWORD: one login, su or sudo by $ALICE (su is started by
# $BOB and asks for $ALICE's credentials; login is started by root on a fresh terminal).
run_as() {
    local service=$1 name=$2; shift 2
    # shellcheck disable=SC2016
    case "$service" in
        login) drive "$name" "$@" "RESULT-login=$ALICE" "$login_shell" "${login_cmd[@]}" ;;
        su) drive "$name" "$@" "RESULT-user=$ALICE" - $(as "$BOB") su "$ALICE" -c 'echo RESULT-user=$(id -un)' ;;
        sudo) drive "$name" "$@" "RESULT-uid=0" - $(as "$ALICE") sudo -k sh -c 'echo RESULT-uid=$(id -u)' ;;
    esac
}
set_prompt() { sed -i '/^prompt = /d' /etc/security/biounlock.conf; echo "prompt = $1" >>/etc/security/biounlock.conf; }
three_wrong="$WRONG $WRONG $WRONG"

# The first authentication after enrolling needs the passcode (require_passcode): no touch.
run_as sudo sudo-first - "$PIN" -
check "sudo: the first time after enrolling the PIN is required ('PIN required: enter it once before using your finger.'), no touch asked" \
    eval '[ "$(rc sudo-first)" = 0 ] && saw sudo-first "PIN required: enter it once before using your finger." && not_saw sudo-first "Touch the"' \
    -- $(files sudo-first)

# no_unix_prompt NAME: pam_unix (or sudo for it) never asked for the Unix password.
# What the prompts say for these services (ServiceWords, issue 33 item 3).
words() { case "$1" in login) echo "logging in" ;; *) echo "running a command as root" ;; esac; }
no_unix_prompt() { not_saw "$1" "Password:" && not_saw "$1" "password for $ALICE"; }

# login_services (issue 32): the first login of this boot at login takes the Unix password, not
# the PIN entered in sudo above and not the finger; pam_setcred records it, and the finger and the
# PIN work at login afterwards (round 1).
run_as login login-boot - - "$ALICE_PW"
check "login: the first login of the boot says 'Password required after a restart.', offers no PIN or touch, and pam_unix's password logs $ALICE in" \
    eval '[ "$(rc login-boot)" = 0 ] && saw login-boot "Password required after a restart." && not_saw login-boot "or password for" && saw login-boot "Password:"' \
    -- $(files login-boot)

# Round 1, the default prompt (type or touch): one prompt on the terminal takes a touch, the PIN
# or the Unix password.
for p in login su sudo; do
    run_as $p $p-touch "$FINGER" - -
    check "$p, type or touch: at 'PIN or password for $(words $p), or touch the reader: ' a touch of the enrolled finger logs $ALICE in (no PIN, no password)" \
        eval '[ "$(rc $p-touch)" = 0 ] && saw $p-touch "PIN or password for $(words $p), or touch the reader: " && not_saw $p-touch "PIN or password for $(words $p): " && no_unix_prompt $p-touch' \
        -- $(files $p-touch)
    run_as $p $p-pin "$three_wrong" "$PIN" -
    check "$p, type or touch: 3 wrong fingers, then at 'PIN or password for $(words $p): ' the PIN logs $ALICE in" \
        eval '[ "$(rc $p-pin)" = 0 ] && saw $p-pin "Fingerprint not recognised" && saw $p-pin "PIN or password for $(words $p): " && no_unix_prompt $p-pin' \
        -- $(files $p-pin)
    run_as $p $p-habit - "$ALICE_PW" -
    check "$p, type or touch: the Unix password typed at biounlock's prompt logs $ALICE in, typed once (pam_unix try_first_pass)" \
        eval '[ "$(rc $p-habit)" = 0 ] && no_unix_prompt $p-habit' -- $(files $p-habit)
done
run_as sudo sudo-typed - "$PIN" -
check "sudo, type or touch: the PIN typed at once, with no touch, lets $ALICE in" \
    eval '[ "$(rc sudo-typed)" = 0 ] && saw sudo-typed "PIN or password for running a command as root, or touch the reader: " && not_saw sudo-typed "Fingerprint not recognised" && no_unix_prompt sudo-typed' \
    -- $(files sudo-typed)
# The package's catalogs (/usr/share/locale): the same sudo in Chinese, by a touch.
# shellcheck disable=SC2016
drive sudo-zh "$FINGER" - - "RESULT-uid=0" - $(AS_LANGUAGE=zh_CN as "$ALICE") sudo -k sh -c 'echo RESULT-uid=$(id -u)'
check "sudo in Chinese (LANGUAGE=zh_CN, the package's /usr/share/locale/zh_CN/LC_MESSAGES/biounlock.mo): at 'PIN 码或密码（运行 root 命令），或触摸指纹读取器：' a touch lets $ALICE in" \
    eval '[ "$(rc sudo-zh)" = 0 ] && saw sudo-zh "PIN 码或密码（运行 root 命令），或触摸指纹读取器：" && not_saw sudo-zh "or touch the reader" && no_unix_prompt sudo-zh' \
    -- $(files sudo-zh)
run_as sudo sudo-enter "$three_wrong" ENTER "$ALICE_PW"
check "sudo, type or touch: Enter alone after 3 wrong fingers falls through to the Unix password, which works" \
    eval '[ "$(rc sudo-enter)" = 0 ] && saw sudo-enter "PIN or password for running a command as root: " && saw sudo-enter "[sudo] password for $ALICE: "' -- $(files sudo-enter)
# Failed matches add up across services (bio_lockout): start the next ones from zero.
biounlock reset "$ALICE" >"$out/reset.log" 2>&1
check "biounlock reset $ALICE clears the failure counters" test $? -eq 0 -- "$out/reset.log"
run_as su su-wrongpin "$three_wrong" 0000 -
check "su: a wrong PIN is handed on to pam_unix, which refuses it (su: Authentication failure); no 'Wrong passcode', no second prompt" \
    eval '[ "$(rc su-wrongpin)" = 6 ] && not_saw su-wrongpin "Wrong passcode" && no_unix_prompt su-wrongpin' -- $(files su-wrongpin)

# Round 2, prompt = sequential (the flow of callers without a terminal): the touch request, the
# reader alone for touch_first seconds, then the prompt with the reader still waiting behind it.
set_prompt sequential
for p in login su sudo; do
    run_as $p $p-seq-touch "$FINGER" - -
    check "$p, sequential: 'Touch the fingerprint reader to authenticate for $(words $p)' and a touch of the enrolled finger log $ALICE in" \
        eval '[ "$(rc $p-seq-touch)" = 0 ] && saw $p-seq-touch "Touch the fingerprint reader to authenticate for $(words $p)" && no_unix_prompt $p-seq-touch' \
        -- $(files $p-seq-touch)
    run_as $p $p-seq-pin "$three_wrong" "$PIN" -
    check "$p, sequential: 3 wrong fingers, then at 'PIN or password for $(words $p): ' the PIN logs $ALICE in" \
        eval '[ "$(rc $p-seq-pin)" = 0 ] && saw $p-seq-pin "Fingerprint not recognised" && saw $p-seq-pin "PIN or password for $(words $p): " && no_unix_prompt $p-seq-pin' \
        -- $(files $p-seq-pin)
done
set_prompt concurrent

# Biometric unlock off: every service falls through to the Unix password.
biounlock disable "$ALICE" >"$out/disable.log" 2>&1
check "setup: biounlock disable $ALICE" test $? -eq 0 -- "$out/disable.log"
for p in login su sudo; do
    run_as $p $p-off - - "$ALICE_PW"
    check "$p: with biometric unlock disabled, no touch prompt and the Unix password logs $ALICE in" \
        eval '[ "$(rc $p-off)" = 0 ] && not_saw $p-off "Touch the" && not_saw $p-off "or password for" && saw $p-off "assword"' \
        -- $(files $p-off)
done

# ---------------------------------------------------------------- remove and purge
apt-get remove -y biounlock >"$out/apt-remove.log" 2>&1
check "remove: apt-get remove biounlock succeeds" test $? -eq 0 -- "$out/apt-remove.log"
check "remove: every common-* file is byte for byte as before the package" pam_same -- /etc/pam.d/common-auth "$out/apt-remove.log"
check "remove: the module, the CLI and biounlockd with its unit, D-Bus and polkit files are gone; the store, the config and biounlock-reauth stay" \
    eval 'test ! -e "$SECURITY/pam_biounlock.so" -a ! -e /usr/bin/biounlock -a ! -e /usr/libexec/biounlock/biounlockd -a ! -e /lib/systemd/system/biounlockd.service \
          -a ! -e /usr/share/dbus-1/system-services/org.biounlock.Manager1.service -a ! -e /usr/share/dbus-1/system.d/org.biounlock.Manager1.conf \
          -a ! -e /usr/share/polkit-1/actions/org.biounlock.policy -a -f /var/lib/biounlock/biounlock.db -a -f /etc/security/biounlock.conf -a -f /etc/pam.d/biounlock-reauth'
run_as sudo sudo-removed - - "$ALICE_PW"
check "remove: sudo still works with the Unix password" test "$(rc sudo-removed)" = 0 -- $(files sudo-removed)
apt-get purge -y biounlock >"$out/apt-purge.log" 2>&1
# shellcheck disable=SC2034  # read by the eval below
purge_rc=$?
check "purge: apt-get purge biounlock removes /var/lib/biounlock, /etc/security/biounlock.conf and /etc/pam.d/biounlock-reauth" \
    eval '[ "$purge_rc" -eq 0 ] && [ ! -e /var/lib/biounlock ] && [ ! -e /etc/security/biounlock.conf ] && [ ! -e /etc/pam.d/biounlock-reauth ]' -- "$out/apt-purge.log"
exit 0
