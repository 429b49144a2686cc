#!/bin/sh
# pam-auth-update-layout.sh OUTDIR PROFILE: the common-* files Debian's own pam-auth-update writes
# with biounlock's profile enabled (`pam-auth-update --enable biounlock`, nothing edited by hand),
# copied into OUTDIR. PROFILE "-": the files it writes without biounlock (scripts/bench's
# "without" case). It runs in a private mount namespace over copies of /etc/pam.d,
# /usr/share/pam-configs (the machine's profiles plus PROFILE as "biounlock") and /var/lib/pam,
# so the host's files are only read. --force: the copies start from the machine's common-*,
# which may carry local edits; the profiles alone decide what is written.
set -eu
out=$1 profile=$2
[ -d "$out" ] && { [ "$profile" = - ] || [ -f "$profile" ]; } || { echo "usage: $0 OUTDIR PROFILE|-" >&2; exit 64; }
work=$(mktemp -d /tmp/bu-pau.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/pam.d" "$work/configs" "$work/lib"
cp -a /etc/pam.d/. "$work/pam.d/"
cp -a /usr/share/pam-configs/. "$work/configs/"
rm -f "$work/configs/biounlock"
if [ "$profile" != - ]; then cp "$profile" "$work/configs/biounlock"; enable="--enable biounlock"; else enable=""; fi
if [ -d /var/lib/pam ]; then cp -a /var/lib/pam/. "$work/lib/"; fi
unshare --mount --propagation private /bin/sh -c '
    set -e
    mount --bind "$1/pam.d" /etc/pam.d
    mount --bind "$1/configs" /usr/share/pam-configs
    mkdir -p /var/lib/pam 2>/dev/null || true
    mount --bind "$1/lib" /var/lib/pam
    DEBIAN_FRONTEND=noninteractive pam-auth-update --force $3 >"$1/pam-auth-update.log" 2>&1
    cp /etc/pam.d/common-auth /etc/pam.d/common-account /etc/pam.d/common-session /etc/pam.d/common-password "$2/"
' sh "$work" "$out" "$enable"
