#!/usr/bin/env bash
# scripts/install and scripts/uninstall into a staging directory (--destdir): every file in
# its place with the right mode, the example config only when absent, the store directory
# 0700, the libfprint helper and the setuid checker when the build has them, and uninstall removing exactly what
# install put there (the config and the store stay unless --purge). Never touches /.
#
#   bash Tests/EndToEnd/install.sh      (BUILD_DIR defaults to the repo's build/)
# Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed"; exits 0 only if all passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$repo/build}"

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "not ok - $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/#   /'; }
check() { local desc=$1; shift; if "$@"; then pass "$desc"; else fail "$desc"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

tmp="$(mktemp -d /tmp/biounlock-install.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
triplet="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)"
security="/lib/$triplet/security"

if [ ! -f "$BUILD_DIR/pam_biounlock.so" ] || [ ! -x "$BUILD_DIR/biounlock" ]; then
    fail "a build exists in $BUILD_DIR (run ./scripts/build)"; finish
fi
# A build directory with a stand-in for the libfprint helper another branch adds.
mkdir -p "$tmp/build"
cp "$BUILD_DIR/pam_biounlock.so" "$BUILD_DIR/biounlock" "$tmp/build/"
cp -r "$BUILD_DIR/locale" "$tmp/build/locale"
printf '#!/bin/sh\necho helper\n' >"$tmp/build/biounlock-fprint"
printf '#!/bin/sh\necho helper\n' >"$tmp/build/biounlock-fprintd"
printf '#!/bin/sh\necho checker\n' >"$tmp/build/biounlock-check"   # a script: the kernel ignores setuid on it
printf '#!/bin/sh\necho service\n' >"$tmp/build/biounlockd"

mode_of() { stat -c '%a' "$1" 2>/dev/null; }
has_mode() { [ "$(mode_of "$1")" = "$2" ]; }

# ---- /usr/local (the default prefix), with the helper ----
d="$tmp/root"
if out="$("$repo/scripts/install" --destdir "$d" --build-dir "$tmp/build" 2>&1)"; then
    pass "scripts/install --destdir exits 0"
else
    fail "scripts/install --destdir exits 0" "$out"; finish
fi
check "module in the multiarch security dir ($security/pam_biounlock.so, 0644)" has_mode "$d$security/pam_biounlock.so" 644
check "module is the build's, byte for byte" cmp -s "$d$security/pam_biounlock.so" "$BUILD_DIR/pam_biounlock.so"
check "CLI in the prefix's bin, for every user (/usr/local/bin/biounlock, 0755), and a link from sbin, its old place" \
    eval 'has_mode "$d/usr/local/bin/biounlock" 755 && [ "$(readlink "$d/usr/local/sbin/biounlock")" = ../bin/biounlock ]'
check "libfprint helper at /usr/libexec/biounlock/biounlock-fprint (0755) when the build has one" \
    has_mode "$d/usr/libexec/biounlock/biounlock-fprint" 755
check "fprintd's helper at /usr/libexec/biounlock/biounlock-fprintd (0755) when the build has one" \
    has_mode "$d/usr/libexec/biounlock/biounlock-fprintd" 755
check "checker at /usr/libexec/biounlock/biounlock-check, setuid root (4755) when the build has one" \
    eval 'has_mode "$d/usr/libexec/biounlock/biounlock-check" 4755 && [ "$(stat -c %U:%G "$d/usr/libexec/biounlock/biounlock-check")" = root:root ]'
check "man pages biounlock(8), pam_biounlock(8), biounlock.conf(5) under the prefix" \
    test -s "$d/usr/local/share/man/man8/biounlock.8" -a -s "$d/usr/local/share/man/man8/pam_biounlock.8" -a -s "$d/usr/local/share/man/man5/biounlock.conf.5"
check "pam-auth-update profile at /usr/share/pam-configs/biounlock (0644)" has_mode "$d/usr/share/pam-configs/biounlock" 644
check "the keyring line's profile at /usr/share/pam-configs/biounlock-keyring (0644, off by default, Additional: keep_password)" \
    eval 'has_mode "$d/usr/share/pam-configs/biounlock-keyring" 644 && grep -qx "Default: no" "$d/usr/share/pam-configs/biounlock-keyring" &&
          grep -qx "Auth-Type: Additional" "$d/usr/share/pam-configs/biounlock-keyring" && grep -qP "^\toptional\tpam_biounlock\.so keep_password\$" "$d/usr/share/pam-configs/biounlock-keyring"'
check "bash and zsh completions under the prefix (share/bash-completion/completions/biounlock, share/zsh/site-functions/_biounlock, 0644)" \
    eval 'has_mode "$d/usr/local/share/bash-completion/completions/biounlock" 644 && has_mode "$d/usr/local/share/zsh/site-functions/_biounlock" 644 &&
          cmp -s "$d/usr/local/share/bash-completion/completions/biounlock" "$repo/packaging/completions/biounlock.bash"'
catalogs_ok=1
for po in "$repo"/po/*.po; do
    lang="$(basename "$po" .po)"
    has_mode "$d/usr/share/locale/$lang/LC_MESSAGES/biounlock.mo" 644 \
        && cmp -s "$d/usr/share/locale/$lang/LC_MESSAGES/biounlock.mo" "$BUILD_DIR/locale/$lang/LC_MESSAGES/biounlock.mo" || catalogs_ok=0
done
check "every catalog of po/ at /usr/share/locale/LANG/LC_MESSAGES/biounlock.mo (0644), whatever the prefix" test "$catalogs_ok" = 1
check "example config installed as /etc/security/biounlock.conf (0644)" \
    eval 'has_mode "$d/etc/security/biounlock.conf" 644 && cmp -s "$d/etc/security/biounlock.conf" "$repo/pam.d/biounlock.conf.example"'
check "store directory /var/lib/biounlock is 0700" has_mode "$d/var/lib/biounlock" 700
check "biounlockd at /usr/libexec/biounlock/biounlockd (0755) with its unit, D-Bus activation file, bus policy, interface and polkit actions (0644)" \
    eval 'has_mode "$d/usr/libexec/biounlock/biounlockd" 755 && has_mode "$d/lib/systemd/system/biounlockd.service" 644 \
          && has_mode "$d/usr/share/dbus-1/system-services/org.biounlock.Manager1.service" 644 && has_mode "$d/usr/share/dbus-1/system.d/org.biounlock.Manager1.conf" 644 \
          && has_mode "$d/usr/share/dbus-1/interfaces/org.biounlock.Manager1.xml" 644 && has_mode "$d/usr/share/polkit-1/actions/org.biounlock.policy" 644'
check "the XML files installed (bus policy, interface, polkit actions) are well-formed (polkitd ignores an action file that is not)" \
    python3 -c 'import sys, xml.dom.minidom; [xml.dom.minidom.parse(f) for f in sys.argv[1:]]' \
        "$d/usr/share/dbus-1/system.d/org.biounlock.Manager1.conf" "$d/usr/share/dbus-1/interfaces/org.biounlock.Manager1.xml" \
        "$d/usr/share/polkit-1/actions/org.biounlock.policy"
if command -v systemd-analyze >/dev/null 2>&1; then
    check "the unit passes systemd-analyze verify (its ExecStart the installed biounlockd)" \
        eval 'sed "s|^ExecStart=.*|ExecStart=$d/usr/libexec/biounlock/biounlockd|" "$d/lib/systemd/system/biounlockd.service" >"$tmp/biounlockd.service" && ! systemd-analyze verify "$tmp/biounlockd.service" 2>&1 | grep -v "man biounlockd" | grep -q .'
fi
check "the only file written to /etc/pam.d is biounlock-reauth (biounlockd's re-authentication, 0644)" \
    eval '[ "$(ls "$d/etc/pam.d")" = biounlock-reauth ] && has_mode "$d/etc/pam.d/biounlock-reauth" 644 && cmp -s "$d/etc/pam.d/biounlock-reauth" "$repo/pam.d/biounlock-reauth"'

# Installing again keeps an edited config and repairs the store directory's mode.
echo "timeout = 7" >"$d/etc/security/biounlock.conf"
chmod 0755 "$d/var/lib/biounlock"
"$repo/scripts/install" --destdir "$d" --build-dir "$tmp/build" >"$tmp/again.log" 2>&1
check "installing again leaves an existing /etc/security/biounlock.conf alone" \
    eval 'grep -qx "timeout = 7" "$d/etc/security/biounlock.conf" && grep -q "exists: left as it is" "$tmp/again.log"'
check "installing again puts /var/lib/biounlock back to 0700" has_mode "$d/var/lib/biounlock" 700

# The profile is what pam-auth-update expects: Primary auth, before pam_unix (priority > 256).
profile="$d/usr/share/pam-configs/biounlock"
check "profile: Auth-Type Primary, Priority above pam_unix's 256, Default no" \
    eval 'grep -qx "Auth-Type: Primary" "$profile" && [ "$(sed -n "s/^Priority: //p" "$profile")" -gt 256 ] && grep -qx "Default: no" "$profile"'
check "profile: the README's control line, with success=end for pam-auth-update to turn into a jump" \
    grep -qP '^\t\[success=end ignore=ignore authinfo_unavail=ignore maxtries=ignore user_unknown=ignore module_unknown=ignore default=die\]\tpam_biounlock\.so$' "$profile"

# ---- uninstall ----
"$repo/scripts/uninstall" --destdir "$d" >"$tmp/uninstall.log" 2>&1
left="$(cd "$d" && find . \( -type f -o -type l \) | sort)"
check "scripts/uninstall removes every installed file but the config and biounlock-reauth" \
    test "$left" = "$(printf './etc/pam.d/biounlock-reauth\n./etc/security/biounlock.conf')"
check "scripts/uninstall keeps the store directory" test -d "$d/var/lib/biounlock"
"$repo/scripts/uninstall" --destdir "$d" --purge >"$tmp/purge.log" 2>&1
check "scripts/uninstall --purge removes the config, biounlock-reauth and the store directory" \
    test ! -e "$d/etc/security/biounlock.conf" -a ! -e "$d/etc/pam.d/biounlock-reauth" -a ! -e "$d/var/lib/biounlock"

# ---- --prefix /usr (the package's layout), no helper in the build ----
rm "$tmp/build/biounlock-fprint" "$tmp/build/biounlock-fprintd" "$tmp/build/biounlock-check" "$tmp/build/biounlockd"
d2="$tmp/usr"
# An install from before 0.2.0 left the CLI in sbin: the new one replaces it in bin.
mkdir -p "$d2/usr/sbin" && echo old >"$d2/usr/sbin/biounlock"
"$repo/scripts/install" --prefix /usr --destdir "$d2" --build-dir "$tmp/build" >"$tmp/usr.log" 2>&1
check "--prefix /usr: CLI in /usr/bin (the old /usr/sbin copy now a link to it), man pages in /usr/share/man, module still in $security" \
    test -x "$d2/usr/bin/biounlock" -a -L "$d2/usr/sbin/biounlock" -a -s "$d2/usr/share/man/man8/biounlock.8" -a -f "$d2$security/pam_biounlock.so"
check "--prefix /usr: completions where Debian's bash-completion and zsh look (/usr/share/bash-completion/completions/biounlock, /usr/share/zsh/vendor-completions/_biounlock)" \
    test -f "$d2/usr/share/bash-completion/completions/biounlock" -a -f "$d2/usr/share/zsh/vendor-completions/_biounlock"
check "no helper in the build: nothing in /usr/libexec/biounlock (nor biounlockd's files)" \
    test ! -e "$d2/usr/libexec/biounlock" -a ! -e "$d2/usr/share/dbus-1" -a ! -e "$d2/etc/pam.d"

# ---- usage ----
"$repo/scripts/install" --bogus >/dev/null 2>&1
check "scripts/install with an unknown argument exits 64" test $? -eq 64

finish
