#!/bin/bash
# upgrade.sh: the upgrade scenarios, run as root INSIDE a fresh clean Debian 12 root by
# Tests/EndToEnd/cleanroot.sh. Expects /root/old.deb (0.1.0, Tests/Fixtures), /root/new.deb (this
# build), /root/e2e/pam-harness (to read what the installed module logs); writes to /root/out.
#
# Someone runs 0.1.0: fingers enrolled, a PIN set, biometric unlock on (and off for one service),
# a few failures counted, audit rows written. They upgrade with `apt install ./new.deb`, keeping
# their edited config. Everything must still be there, and sudo must work by touch and by PIN at
# once, with no new setup; a sudo already waiting for a touch while the upgrade runs completes.
# Then a downgrade: the old module meets the newer store, falls back to the password and says
# why; upgrading again brings everything back.
# shellcheck disable=SC2046
set -u
export DEBIAN_FRONTEND=noninteractive
out=/root/out
mkdir -p "$out"
cd /root || exit 1

ALICE=bioalice ALICE_PW='alice-Unix-pw-7' BOB=biobob BOB_PW='bob-Unix-pw-9'
PIN=2468 FINGER=bioalice-right-index WRONG=mallory

# pass, fail, check: the end-to-end scripts' own (Tests/EndToEnd/lib/checks.bash, installed here).
# shellcheck source=../lib/checks.bash
source /root/e2e/checks.bash
must() { [ "$failed" -eq 0 ] || { echo "# stopping: a step the rest depends on failed"; exit 1; }; }
version() { dpkg-query -W -f='${Version}' biounlock 2>/dev/null; }

# sudo_as NAME STDIN [TOUCH...]: alice runs `sudo -S -k id -u` with STDIN while root touches the
# simulated reader with each TOUCH in turn; leaves NAME.out / NAME.rc.
sudo_as() {
    local name=$1 input=$2; shift 2
    local pid=
    if [ $# -gt 0 ]; then
        (for id in "$@"; do biounlock sim scan "$id" --wait 20 || exit 1; done) >"$out/$name.touch" 2>&1 &
        pid=$!
    fi
    printf '%s' "$input" | timeout -k 5 60 setpriv --reuid="$ALICE" --regid="$ALICE" --init-groups \
        env -i PATH=/usr/bin:/bin LANG=C sudo -S -k id -u >"$out/$name.out" 2>&1
    echo $? >"$out/$name.rc"
    [ -n "$pid" ] && wait "$pid"
}
# sudo -S writes its prompts without a newline: id's "0" may follow one on the same line.
ran() { [ "$(cat "$out/$1.rc")" = 0 ] && grep -Eq '(^|: )0$' "$out/$1.out"; }

# ---------------------------------------------------------------- 0.1.0, set up and used
apt-get install -y --no-install-recommends /root/old.deb >"$out/apt-old.log" 2>&1
check "0.1.0: apt-get install ./biounlock_0.1.0_amd64.deb" eval '[ "$(version)" = 0.1.0 ]' -- "$out/apt-old.log"
must
pam-auth-update --enable biounlock >"$out/pam-enable.log" 2>&1
{
    useradd -m -s /bin/bash "$ALICE" && useradd -m -s /bin/bash "$BOB" &&
    printf '%s:%s\n%s:%s\n' "$ALICE" "$ALICE_PW" "$BOB" "$BOB_PW" | chpasswd &&
    printf '%s ALL=(ALL:ALL) ALL\n' "$ALICE" >/etc/sudoers.d/biounlock-test && chmod 0440 /etc/sudoers.d/biounlock-test &&
    grep -q "$(hostname)" /etc/hosts || echo "127.0.1.1 $(hostname)" >>/etc/hosts
} >"$out/users.log" 2>&1
# The admin's own config (a changed conffile: the upgrade keeps it). 0.1.0 wrote remote = skip.
cat >/etc/security/biounlock.conf <<'CONF'
policy = biometrics-or-passcode
sensor = simulated
sim_socket = /run/biounlock-sim/sensor
timeout = 60
max_tries = 3
remote = skip
CONF
install -d -m 0700 /run/biounlock-sim
{
    biounlock enrol "$ALICE" --finger right-index --timeout 30 &
    enrol=$!
    for _ in 1 2 3 4 5; do biounlock sim scan "$FINGER" --wait 10 || break; done
    wait "$enrol"
    biounlock enrol "$BOB" --finger left-thumb --timeout 30 &
    enrol=$!
    for _ in 1 2 3 4 5; do biounlock sim scan biobob-left-thumb --wait 10 || break; done
    wait "$enrol"
    echo "$PIN" | biounlock passcode set "$ALICE" --stdin &&
    echo "bob-passcode-1" | biounlock passcode set "$BOB" --kind password --stdin &&
    biounlock enable "$ALICE" && biounlock disable "$ALICE" --service login && biounlock enable "$BOB"
} >"$out/setup.log" 2>&1
check "0.1.0: two users enrolled, passcodes set, biometric unlock on (off for login for $ALICE)" test $? -eq 0 -- "$out/setup.log"
must
sudo_as old-pin "$PIN"$'\n'
check "0.1.0: sudo by the PIN (the first time after enrolling)" ran old-pin -- "$out/old-pin.out"
sudo_as old-fail "0000"$'\n' "$WRONG" "$WRONG" "$WRONG"
check "0.1.0: three wrong fingers and a wrong PIN fail sudo (and are counted)" eval '! ran old-fail' -- "$out/old-fail.out"
biounlock status --json >"$out/status-before.json" 2>"$out/status-before.err"
biounlock log --json --limit 1000 >"$out/log-before.json" 2>&1
check "0.1.0: status shows the counted failures (3 fingers, 1 PIN) before the upgrade" \
    grep -q '"biometric_failures": 3' "$out/status-before.json" -- "$out/status-before.json" "$out/status-before.err"

# ---------------------------------------------------------------- the upgrade, with a sudo waiting
# A sudo started before the upgrade runs the old module, waiting for a touch meanwhile.
(printf '' | timeout -k 5 90 setpriv --reuid="$ALICE" --regid="$ALICE" --init-groups \
    env -i PATH=/usr/bin:/bin LANG=C sudo -S -k id -u >"$out/during.out" 2>&1; echo $? >"$out/during.rc") &
waiting=$!
for _ in $(seq 1 100); do [ -S /run/biounlock-sim/sensor ] && break; sleep 0.1; done
apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold /root/new.deb >"$out/apt-new.log" 2>&1
apt_rc=$?
new_version=$(dpkg-deb -f /root/new.deb Version)
check "upgrade: apt-get install ./biounlock_${new_version}_amd64.deb over 0.1.0, keeping the admin's config" \
    eval '[ "$apt_rc" = 0 ] && [ "$(version)" = "$new_version" ] && grep -q "^remote = skip" /etc/security/biounlock.conf' -- "$out/apt-new.log"
must
biounlock sim scan "$FINGER" --wait 20 >"$out/during.touch" 2>&1
wait "$waiting"
check "upgrade: a sudo that was waiting for a touch while the package changed completes with the touch" \
    eval '[ "$(cat "$out/during.rc")" = 0 ] && grep -Eq "(^|: )0$" "$out/during.out"' -- "$out/during.out" "$out/during.touch"
biounlock migrate >"$out/migrate.log" 2>&1
check "upgrade: the package migrated the store (biounlock migrate finds it at the current schema)" \
    grep -q "is at schema version" "$out/migrate.log" -- "$out/migrate.log" "$out/apt-new.log"

# The touch above was a success (it reset the finger counter and added an audit row); all else
# must be as 0.1.0 showed it before the upgrade.
biounlock status --json >"$out/status-after.json" 2>"$out/status-after.err"
biounlock log --json --limit 1000 >"$out/log-after.json" 2>&1
# (The host compares status-before.json and status-after.json, log-before.json and
# log-after.json: the clean root has no python. See cleanroot.sh.)
sudo_as new-touch "" "$FINGER"
check "upgrade: sudo by a touch, with no new setup" ran new-touch -- "$out/new-touch.out" "$out/new-touch.touch"
sudo_as new-pin "$PIN"$'\n'
check "upgrade: sudo by the PIN at the new prompt ('PIN or password for running a command as root, or touch the reader, then press Enter: ')" \
    eval 'ran new-pin && grep -qF "PIN or password for running a command as root, or touch the reader, then press Enter: " "$out/new-pin.out"' -- "$out/new-pin.out"
sudo_as new-unix "$ALICE_PW"$'\n'
check "upgrade: the Unix password typed at that prompt works too (one prompt, any way in)" ran new-unix -- "$out/new-unix.out"

# ---------------------------------------------------------------- downgrade, and back
apt-get install -y --no-install-recommends --allow-downgrades -o Dpkg::Options::=--force-confold /root/old.deb >"$out/apt-down.log" 2>&1
check "downgrade: apt-get install --allow-downgrades ./biounlock_0.1.0_amd64.deb" eval '[ "$(version)" = 0.1.0 ]' -- "$out/apt-down.log"
mkdir -p /root/e2e/pam.d
# The module alone, so that the stack's result is the module's own code.
printf 'auth required pam_biounlock.so\n' >/root/e2e/pam.d/down
/root/e2e/pam-harness --confdir /root/e2e/pam.d --service down --user "$ALICE" --syslog --answer "$PIN" >"$out/down.txt" 2>&1
check "downgrade: the old module meets the newer store, falls back to the password (PAM_AUTHINFO_UNAVAIL) and says why in syslog" \
    eval 'grep -q "RESULT .* PAM_AUTHINFO_UNAVAIL" "$out/down.txt" && grep -q "SYSLOG: pam_biounlock(down:auth): store unavailable: .*newer than this module" "$out/down.txt"' -- "$out/down.txt"
sudo_as down-unix "$ALICE_PW"$'\n'
check "downgrade: sudo with the Unix password still works" ran down-unix -- "$out/down-unix.out"
apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold /root/new.deb >"$out/apt-again.log" 2>&1
sudo_as again-pin "$PIN"$'\n'
check "upgrade again: the store the old version left alone works at once (sudo by the PIN)" \
    eval '[ "$(version)" = "$new_version" ] && ran again-pin' -- "$out/apt-again.log" "$out/again-pin.out"
exit 0
