# shellcheck shell=bash
# scripts/lib/paths.sh: where biounlock's files go, shared by scripts/install, scripts/uninstall
# and scripts/package so that all three agree.
#
# Set PREFIX and DESTDIR, source this file, call paths_init; then use the variables below.
# Only the CLI (P/bin: every user runs it) and the man pages follow PREFIX. Everything that
# PAM, pam-auth-update, the module, D-Bus, systemd or polkit look up by a fixed name stays at
# that name whatever the prefix:
#   PAM_MODULE_DIR  /lib/<multiarch>/security   where libpam loads modules from (Debian 12 keeps
#                                              them under /lib; /lib is /usr/lib with merged /usr)
#   LIBEXEC_DIR     /usr/libexec/biounlock      the helpers the module starts (libfprint, the checker)
#   PAM_CONFIGS_DIR /usr/share/pam-configs      pam-auth-update's profiles
#   CONFIG_FILE     /etc/security/biounlock.conf
#   STATE_DIR       /var/lib/biounlock          the store's directory (0700, root)
#   LOCALE_DIR      /usr/share/locale           the message catalogs, LANG/LC_MESSAGES/biounlock.mo
#                                              (where the module binds its gettext domain)
# The shell completions follow PREFIX, where bash-completion and zsh look:
#   BASH_COMPLETION_DIR  PREFIX/share/bash-completion/completions
#   ZSH_COMPLETION_DIR   /usr/share/zsh/vendor-completions for the package (PREFIX /usr),
#                        PREFIX/share/zsh/site-functions otherwise (Debian's zsh reads both)
#   biounlockd's files (biounlockd(8)): SYSTEMD_UNIT_DIR /lib/systemd/system (biounlockd.service),
#   DBUS_SERVICES_DIR /usr/share/dbus-1/system-services (activation), DBUS_POLICY_DIR
#   /usr/share/dbus-1/system.d (bus policy), DBUS_INTERFACES_DIR /usr/share/dbus-1/interfaces,
#   POLKIT_ACTIONS_DIR /usr/share/polkit-1/actions, PAM_D_DIR /etc/pam.d (biounlock-reauth)
# All of them are prefixed with DESTDIR (staging for a package), which is empty for a real install.

# Prints the Debian multiarch triplet of the host (x86_64-linux-gnu on amd64).
paths_multiarch() {
    local t=""
    if command -v dpkg-architecture >/dev/null 2>&1; then
        t="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || true)"
    fi
    if [ -z "$t" ] && command -v gcc >/dev/null 2>&1; then
        t="$(gcc -print-multiarch 2>/dev/null || true)"
    fi
    if [ -z "$t" ] && command -v dpkg >/dev/null 2>&1; then
        case "$(dpkg --print-architecture 2>/dev/null)" in
            amd64) t=x86_64-linux-gnu ;;
            arm64) t=aarch64-linux-gnu ;;
            armhf) t=arm-linux-gnueabihf ;;
            i386) t=i386-linux-gnu ;;
            ppc64el) t=powerpc64le-linux-gnu ;;
            s390x) t=s390x-linux-gnu ;;
            riscv64) t=riscv64-linux-gnu ;;
        esac
    fi
    [ -n "$t" ] || { echo "cannot tell the multiarch triplet (no dpkg-architecture, gcc or dpkg)" >&2; return 1; }
    printf '%s\n' "$t"
}

# shellcheck disable=SC2034  # the variables are for the scripts that source this file
paths_init() {
    PREFIX="${PREFIX:-/usr/local}"
    DESTDIR="${DESTDIR:-}"
    case "$PREFIX" in /*) ;; *) echo "--prefix must be an absolute path: $PREFIX" >&2; return 1 ;; esac
    case "$DESTDIR" in ""|/*) ;; *) DESTDIR="$(pwd)/$DESTDIR" ;; esac
    DESTDIR="${DESTDIR%/}"
    PREFIX="${PREFIX%/}"
    MULTIARCH="$(paths_multiarch)" || return 1
    PAM_MODULE_DIR="/lib/$MULTIARCH/security"
    SBIN_DIR="$PREFIX/sbin"   # where the CLI was before 0.2.0 (removed by uninstall)
    BIN_DIR="$PREFIX/bin"
    LIBEXEC_DIR="/usr/libexec/biounlock"
    MAN_DIR="$PREFIX/share/man"
    PAM_CONFIGS_DIR="/usr/share/pam-configs"
    CONFIG_FILE="/etc/security/biounlock.conf"
    STATE_DIR="/var/lib/biounlock"
    LOCALE_DIR="/usr/share/locale"
    BASH_COMPLETION_DIR="$PREFIX/share/bash-completion/completions"
    if [ "$PREFIX" = /usr ]; then ZSH_COMPLETION_DIR=/usr/share/zsh/vendor-completions
    else ZSH_COMPLETION_DIR="$PREFIX/share/zsh/site-functions"; fi
    SYSTEMD_UNIT_DIR="/lib/systemd/system"
    DBUS_SERVICES_DIR="/usr/share/dbus-1/system-services"
    DBUS_POLICY_DIR="/usr/share/dbus-1/system.d"
    DBUS_INTERFACES_DIR="/usr/share/dbus-1/interfaces"
    POLKIT_ACTIONS_DIR="/usr/share/polkit-1/actions"
    PAM_D_DIR="/etc/pam.d"
    REAUTH_PAM_FILE="$PAM_D_DIR/biounlock-reauth"
    # The languages of po/ (the catalogs scripts/build compiles), when the repository is known.
    LANGUAGES=()
    local po
    if [ -n "${repo:-}" ] && [ -d "$repo/po" ]; then
        for po in "$repo"/po/*.po; do [ -f "$po" ] && LANGUAGES+=("$(basename "$po" .po)"); done
    fi
    # Every file scripts/install may put in place (without DESTDIR); scripts/uninstall removes these.
    INSTALLED_FILES=(
        "$PAM_MODULE_DIR/pam_biounlock.so"
        "$BIN_DIR/biounlock"
        "$SBIN_DIR/biounlock"
        "$LIBEXEC_DIR/biounlock-fprint"
        "$LIBEXEC_DIR/biounlock-fprintd"
        "$LIBEXEC_DIR/biounlock-check"
        "$LIBEXEC_DIR/biounlockd"
        "$SYSTEMD_UNIT_DIR/biounlockd.service"
        "$DBUS_SERVICES_DIR/org.biounlock.Manager1.service"
        "$DBUS_POLICY_DIR/org.biounlock.Manager1.conf"
        "$DBUS_INTERFACES_DIR/org.biounlock.Manager1.xml"
        "$POLKIT_ACTIONS_DIR/org.biounlock.policy"
        "$MAN_DIR/man8/biounlock.8"
        "$MAN_DIR/man8/biounlockd.8"
        "$MAN_DIR/man8/pam_biounlock.8"
        "$MAN_DIR/man5/biounlock.conf.5"
        "$PAM_CONFIGS_DIR/biounlock"
        "$PAM_CONFIGS_DIR/biounlock-keyring"
        "$BASH_COMPLETION_DIR/biounlock"
        "$ZSH_COMPLETION_DIR/_biounlock"
    )
    local lang
    for lang in "${LANGUAGES[@]}"; do INSTALLED_FILES+=("$LOCALE_DIR/$lang/LC_MESSAGES/biounlock.mo"); done
}
