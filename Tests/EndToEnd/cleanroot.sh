#!/usr/bin/env bash
# End-to-end on a clean Debian 12 root: the .deb from scripts/package installs without the
# Swift toolchain, pam-auth-update turns it on and off (byte for byte), and the REAL login,
# su and sudo of that root authenticate a test user by a simulated touch and by the biounlock
# PIN on a terminal (expect) -- with the default type-or-touch prompt and with
# prompt=sequential, and in Chinese from the package's catalogs -- and fall through to the Unix
# password when biometric unlock is off;
# then apt remove / purge leave the PAM stack as it was.
#
#   bash Tests/EndToEnd/cleanroot.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# The root: debootstrap --variant=minbase bookworm from this machine's apt mirror, plus sudo
# and expect, plus the package's dependencies downloaded (not installed), cached as a tarball
# in /var/cache/biounlock-test/ keyed by a hash of those package lists (scripts/lib/cleanroot.sh;
# CLEANROOT_REBUILD=1 makes a new one). Each run unpacks a fresh copy under /tmp and runs
# Tests/EndToEnd/cleanroot/inside.sh in it with `unshare --mount --pid --fork` + chroot: the
# host's /etc and PAM stack are never touched (checked at the end). Every wait is bounded.
# CLEANROOT_KEEP=1 keeps the unpacked root and the terminal transcripts of every scenario.
# Warm (tarball cached): about 35-40 s on 2 cores. Cold: building the tarball adds about 1 minute
# (debootstrap from the mirror; more on a slow one).
#
# Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed"; exits 0 only if all passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=../../scripts/lib/cleanroot.sh
source "$repo/scripts/lib/cleanroot.sh"

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() {
    failed=$((failed + 1)); echo "not ok - $1"; shift
    local f
    for f in "$@"; do [ -f "$f" ] && { echo "#   --- ${f##*/}"; tail -n 30 "$f" | sed 's/^/#   | /'; }; done
}
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

host_state() {
    local f
    for f in /etc/passwd /etc/group /etc/shadow /etc/sudoers /etc/security/biounlock.conf /etc/pam.d/* \
        /usr/share/pam-configs/* /lib/*/security/pam_biounlock.so /var/lib/biounlock /var/lib/pam/*; do
        if [ -f "$f" ]; then printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -c1-16)"; elif [ -e "$f" ]; then echo "$f exists"; fi
    done
}

[ "$(id -u)" -eq 0 ] || { fail "runs as root (debootstrap, unshare, chroot)"; finish; }
for tool in debootstrap zstd unshare chroot dpkg-deb dpkg-shlibdeps scdoc; do
    command -v "$tool" >/dev/null 2>&1 || { fail "tool '$tool' is installed (run ./scripts/deps)"; finish; }
done
started=$SECONDS
host_before="$(host_state)"
tmp="$(mktemp -d /tmp/biounlock-cleanroot.XXXXXX)"
# CLEANROOT_KEEP=1 keeps the root and every transcript (in $tmp/root/root/out) for a look.
if [ "${CLEANROOT_KEEP:-0}" = 1 ]; then trap 'echo "# kept $tmp"' EXIT; else trap 'rm -rf --one-file-system "$tmp"' EXIT; fi

# ---- the package ----
if "$repo/scripts/package" --build-dir "$BUILD_DIR" --out "$tmp/dist" --no-lintian >"$tmp/package.log" 2>&1; then
    pass "scripts/package builds the .deb from $BUILD_DIR"
else
    fail "scripts/package builds the .deb from $BUILD_DIR" "$tmp/package.log"; finish
fi
deb="$(ls "$tmp"/dist/biounlock_*_*.deb)"
depends="$(dpkg-deb -f "$deb" Depends)"
if printf '%s' "$depends" | grep -q 'libpam0g' && printf '%s' "$depends" | grep -q 'libsodium23' \
    && printf '%s' "$depends" | grep -q 'libsqlite3-0' && printf '%s' "$depends" | grep -q 'libfprint-2-2' \
    && ! printf '%s' "$depends" | grep -qi swift; then
    pass "package: Depends has libpam0g, libsodium23, libsqlite3-0, libfprint-2-2 and nothing from Swift ($depends)"
else
    fail "package: Depends has libpam0g, libsodium23, libsqlite3-0, libfprint-2-2 and nothing from Swift ($depends)"
fi
# The settings app's own package (issue 31): what it installs, what it depends on, and that its
# desktop file and AppStream metainfo, as packaged, validate. (It is not installed in the clean
# root: GTK 4 and libadwaita would make that root several times larger; settings-app.sh runs the
# app from the build.)
sdeb="$(ls "$tmp"/dist/biounlock-settings_*_*.deb 2>/dev/null | head -1)"
if [ -n "$sdeb" ]; then
    sdepends="$(dpkg-deb -f "$sdeb" Depends)"
    version="$(dpkg-deb -f "$deb" Version)"
    if printf '%s' "$sdepends" | grep -q "biounlock (= $version)" && printf '%s' "$sdepends" | grep -q 'libgtk-4-1' \
        && printf '%s' "$sdepends" | grep -q 'libadwaita-1-0' && ! printf '%s' "$sdepends" | grep -qi swift; then
        pass "settings package: Depends has biounlock (= $version), libgtk-4-1, libadwaita-1-0 and nothing from Swift"
    else
        fail "settings package: Depends has biounlock (= $version), libgtk-4-1, libadwaita-1-0 and nothing from Swift ($sdepends)"
    fi
    dpkg-deb -c "$sdeb" | awk '{print $1, $6}' >"$tmp/settings-contents.txt"
    missing=""
    for f in "-rwxr-xr-x ./usr/bin/biounlock-settings" "-rw-r--r-- ./usr/share/applications/org.biounlock.Settings.desktop" \
        "-rw-r--r-- ./usr/share/metainfo/org.biounlock.Settings.metainfo.xml" \
        "-rw-r--r-- ./usr/share/icons/hicolor/scalable/apps/org.biounlock.Settings.svg" \
        "-rw-r--r-- ./usr/share/man/man1/biounlock-settings.1.gz"; do
        grep -qxF -- "$f" "$tmp/settings-contents.txt" || missing="$missing ${f#* }"
    done
    if [ -z "$missing" ] && ! grep -q 'sbin\|/etc/\|security/' "$tmp/settings-contents.txt"; then
        pass "settings package: the app, its .desktop file, metainfo, icon and man page, with their modes; nothing in /etc or PAM's directories"
    else
        fail "settings package: the app, its .desktop file, metainfo, icon and man page (missing:${missing:- none})" "$tmp/settings-contents.txt"
    fi
    mkdir -p "$tmp/settings-deb" && dpkg-deb -x "$sdeb" "$tmp/settings-deb"
    if command -v desktop-file-validate >/dev/null 2>&1 && command -v appstreamcli >/dev/null 2>&1; then
        if desktop-file-validate "$tmp/settings-deb/usr/share/applications/org.biounlock.Settings.desktop" >"$tmp/settings-validate.txt" 2>&1 \
            && appstreamcli validate --no-net "$tmp/settings-deb/usr/share/metainfo/org.biounlock.Settings.metainfo.xml" >>"$tmp/settings-validate.txt" 2>&1; then
            pass "settings package: its .desktop file and metainfo validate as installed"
        else
            fail "settings package: its .desktop file and metainfo validate as installed" "$tmp/settings-validate.txt"
        fi
    fi
else
    fail "scripts/package builds the settings package (build/biounlock-settings exists)" "$tmp/package.log"
fi
if command -v lintian >/dev/null 2>&1; then
    lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v 'running with root privileges' >"$tmp/lintian.log"
    if ! grep -qE '^(E|W):' "$tmp/lintian.log"; then pass "package: lintian reports no errors or warnings"
    else fail "package: lintian reports no errors or warnings" "$tmp/lintian.log"; fi
fi

# ---- the clean root ----
mapfile -t dep_names < <(printf '%s\n' "$depends" | tr ',|' '\n\n' | sed 's/^ *//; s/[ (].*//' | grep . | LC_ALL=C sort -u)
if tarball="$(cleanroot_tarball sudo expect -- "${dep_names[@]}" 2>"$tmp/tarball.log")"; then
    pass "clean root: Debian 12 minbase + sudo + expect (tarball $(basename "$tarball"), $((SECONDS - started)) s so far)"
else
    fail "clean root: debootstrap a Debian 12 minbase root" "$tmp/tarball.log"; finish
fi
cat "$tmp/tarball.log" >&2
root="$tmp/root"
cleanroot_unpack "$tarball" "$root" || { fail "clean root: unpack the tarball"; finish; }
install -d -m 0700 "$root/root/e2e"
install -m 0644 "$deb" "$root/root/biounlock.deb"
install -m 0644 "$here/cleanroot/inside.sh" "$here/cleanroot/drive.exp" "$here/lib/checks.bash" "$root/root/e2e/"

# ---- the scenarios, inside ----
cleanroot_run "$root" 420 bash /root/e2e/inside.sh >"$tmp/inside.out" 2>"$tmp/inside.err"
inside_rc=$?
cat "$tmp/inside.out"
passed=$((passed + $(grep -c '^ok - ' "$tmp/inside.out")))
failed=$((failed + $(grep -c '^not ok - ' "$tmp/inside.out")))
if [ "$inside_rc" -eq 0 ]; then pass "the scenarios in the root ran to the end"
else fail "the scenarios in the root ran to the end (status $inside_rc)" "$tmp/inside.err"; fi

# ---- the host ----
# ---- upgrades: 0.1.0 (Tests/Fixtures), used, then this build over it; a fresh copy of the root.
old_deb="$repo/Tests/Fixtures/biounlock_0.1.0_amd64.deb"
root2="$tmp/root-upgrade"
if [ -f "$old_deb" ] && cleanroot_unpack "$tarball" "$root2"; then
    install -d -m 0700 "$root2/root/e2e"
    install -m 0644 "$old_deb" "$root2/root/old.deb"
    install -m 0644 "$deb" "$root2/root/new.deb"
    # The harness as a plain C program (SwiftPM links build/pam-harness with the Swift runtime,
    # which the clean root does not have): it reads what the installed module logs.
    cc -O2 -o "$root2/root/e2e/pam-harness" "$repo/Tests/Harness/pam-harness/main.c" -lpam -ldl -Wl,--export-dynamic 2>"$tmp/harness-cc.log" \
        || fail "upgrade: compile the harness for the clean root" "$tmp/harness-cc.log"
    install -m 0644 "$here/cleanroot/upgrade.sh" "$here/lib/checks.bash" "$root2/root/e2e/"
    cleanroot_run "$root2" 420 bash /root/e2e/upgrade.sh >"$tmp/upgrade.out" 2>"$tmp/upgrade.err"
    upgrade_rc=$?
    cat "$tmp/upgrade.out"
    passed=$((passed + $(grep -c '^ok - ' "$tmp/upgrade.out")))
    failed=$((failed + $(grep -c '^not ok - ' "$tmp/upgrade.out")))
    if [ "$upgrade_rc" -eq 0 ]; then pass "the upgrade scenarios ran to the end"
    else fail "the upgrade scenarios ran to the end (status $upgrade_rc)" "$tmp/upgrade.err"; fi
    u="$root2/root/out"
    if python3 - "$u/status-before.json" "$u/status-after.json" "$u/log-before.json" "$u/log-after.json" >"$tmp/compare.txt" 2>&1 <<'PY'
import json, sys
before = json.load(open(sys.argv[1])); after = json.load(open(sys.argv[2]))
lb = json.load(open(sys.argv[3]))["events"]; la = json.load(open(sys.argv[4]))["events"]
problems = []
users_after = {u["user"]: u for u in after["users"]}
for u in before["users"]:
    a = users_after.get(u["user"])
    if a is None:
        problems.append("%s is gone" % u["user"]); continue
    for k, v in u.items():
        # The touch that completed during the upgrade reset alice's finger counter.
        if u["user"] == "bioalice" and k in ("biometric_failures", "last_success"): continue
        if a.get(k) != v: problems.append("%s.%s: %r before, %r after" % (u["user"], k, v, a.get(k)))
    if (a.get("account") or {}).get("matches") is not True:
        problems.append("%s: not bound to its account after the migration" % u["user"])
if users_after.get("bioalice", {}).get("biometric_failures") != 0:
    problems.append("bioalice: the touch during the upgrade did not reset the finger counter")
# Newest first: the rows before the upgrade are the tail, unchanged, after the new ones.
if la[len(la) - len(lb):] != lb: problems.append("audit rows changed (%d before, %d after)" % (len(lb), len(la)))
print("\n".join(problems) if problems else "the same users, settings, prints, counters and audit rows")
sys.exit(1 if problems else 0)
PY
    then pass "upgrade: every user, print, passcode kind, toggle, service override, counter and audit row is still there (status --json and log --json before and after)"
    else fail "upgrade: every user, print, passcode kind, toggle, service override, counter and audit row is still there" "$tmp/compare.txt" "$u/status-before.json" "$u/status-after.json"; fi
else
    fail "upgrade: Tests/Fixtures/biounlock_0.1.0_amd64.deb and a second copy of the root"
fi

if [ "$host_before" = "$(host_state)" ]; then
    pass "host: /etc/passwd, group, shadow, sudoers, pam.d, pam-configs and /var/lib/pam unchanged; no biounlock installed"
else
    diff <(printf '%s\n' "$host_before") <(host_state) >"$tmp/host.diff"
    fail "host: nothing changed" "$tmp/host.diff"
fi
echo "# clean-root test took $((SECONDS - started)) s"
finish
