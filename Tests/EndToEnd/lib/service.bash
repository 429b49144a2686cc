# shellcheck shell=bash
# Tests/EndToEnd/lib/service.bash: biounlockd as a system would run it, inside the sandbox
# (scripts/lib/sandbox.sh, SANDBOX_PRIVATE_RUN=1): the real dbus-daemon with Debian's own
# system bus configuration (/usr/share/dbus-1/system.conf: deny by default, the policy files
# of system.d, activation through the setuid dbus-daemon-launch-helper, running as
# messagebus), the real polkitd running as polkitd, and the project's files -- the activation
# file, the bus policy and the polkit actions -- bind-mounted into the directories those
# programs read, inside the namespace only. biounlockd itself is started by D-Bus activation.
#
# This machine has no logind, so polkit sees no session: every subject is "any". A rule in
# rules.d stands in for logind: the users in SERVICE_ACTIVE_LOCAL are treated as polkit treats
# an active local session under the project's action defaults (manage-own: yes; manage-others:
# auth_admin_keep); everyone else gets the action file's allow_any (no), as a remote or
# inactive session does.
#
#   service_start          (inside a snippet) the bus, polkitd and the activation file
#   service_pid            biounlockd's pid (it is activated by the call this makes), or nothing
#   service_stop

SERVICE_LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/service.bash"
SERVICE_REPO="$(cd "$(dirname "$SERVICE_LIB")/../../.." && pwd)"
export SERVICE_LIB SERVICE_REPO

service_start() {
    local dir="$SANDBOX_DIR/svc" i
    mkdir -p -m 0755 "$dir" "$dir/system-services" "$dir/system.d" "$dir/actions" "$dir/rules.d"
    cp -p /usr/share/dbus-1/system-services/*.service "$dir/system-services/" 2>/dev/null
    # The shipped activation file, pointing at the build and this sandbox's store and sensor.
    sed -e "s|^Exec=.*|Exec=$SANDBOX_BUILD/biounlockd --db $SANDBOX_DB --sensor simulated --sim-socket $SANDBOX_SOCK --config $SANDBOX_DIR/etc/biounlock.conf --idle-timeout ${SERVICE_IDLE:-2} --log-stderr|" \
        "$SERVICE_REPO/data/dbus/org.biounlock.Manager1.service" >"$dir/system-services/org.biounlock.Manager1.service"
    cp -p /usr/share/dbus-1/system.d/*.conf "$dir/system.d/" 2>/dev/null
    cp "$SERVICE_REPO/data/dbus/org.biounlock.Manager1.conf" "$dir/system.d/"
    cp -p /usr/share/polkit-1/actions/*.policy "$dir/actions/" 2>/dev/null
    cp "$SERVICE_REPO/data/polkit/org.biounlock.policy" "$dir/actions/"
    local users="" u
    for u in ${SERVICE_ACTIVE_LOCAL:-}; do users="$users\"$u\", "; done
    cat >"$dir/rules.d/90-logind-stand-in.rules" <<EOF
// biounlock service test: stands in for logind, which this machine lacks (polkit sees no
// session). These users get what org.biounlock.policy gives an active local session; the
// others fall through to allow_any, as a remote or inactive session does.
polkit.addRule(function(action, subject) {
    var activeLocal = [${users}];
    if (activeLocal.indexOf(subject.user) < 0) return polkit.Result.NOT_HANDLED;
    if (action.id == "org.biounlock.manage-own") return polkit.Result.YES;
    if (action.id == "org.biounlock.manage-others") return polkit.Result.AUTH_ADMIN_KEEP;
    return polkit.Result.NOT_HANDLED;
});
EOF
    chmod 0644 "$dir"/system-services/* "$dir"/system.d/* "$dir"/actions/* "$dir"/rules.d/*
    mount --bind "$dir/system-services" /usr/share/dbus-1/system-services || return 1
    mount --bind "$dir/system.d" /usr/share/dbus-1/system.d || return 1
    mount --bind "$dir/actions" /usr/share/polkit-1/actions || return 1
    mount --bind "$dir/rules.d" /etc/polkit-1/rules.d || return 1
    # The shipped re-authentication stack, its module being the build's, on this sandbox's store.
    sed -e "s|pam_biounlock.so passcode_only|$SANDBOX_BUILD/pam_biounlock.so passcode_only $(sandbox_module_args)|" \
        "$SERVICE_REPO/pam.d/biounlock-reauth" >"$SANDBOX_DIR/etc/pam.d/biounlock-reauth"
    chmod 0644 "$SANDBOX_DIR/etc/pam.d/biounlock-reauth"
    mkdir -p -m 0700 "$SANDBOX_DIR/lid" "$SANDBOX_DIR/sessions"

    dbus-daemon --system --nofork --nopidfile --nosyslog >"$dir/dbus.log" 2>&1 &
    SERVICE_DBUS_PID=$!
    for ((i = 0; i < 200; i++)); do
        [ -S /run/dbus/system_bus_socket ] && break
        kill -0 "$SERVICE_DBUS_PID" 2>/dev/null || { sandbox_die "dbus-daemon ended: $(cat "$dir/dbus.log")"; return 1; }
        sleep 0.05
    done
    # Started as root, polkitd switches to its own user (polkitd) itself.
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        /usr/lib/polkit-1/polkitd --no-debug >"$dir/polkitd.log" 2>&1 &
    SERVICE_POLKITD_PID=$!
    for ((i = 0; i < 200; i++)); do
        if dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
            string:org.freedesktop.PolicyKit1 2>/dev/null | grep -q 'boolean true'; then
            return 0
        fi
        kill -0 "$SERVICE_POLKITD_PID" 2>/dev/null || break
        sleep 0.05
    done
    sandbox_die "polkitd did not take its name: $(tail -n 5 "$dir/polkitd.log")"
    return 1
}

# Whether biounlockd owns its name now (no activation).
service_running() {
    dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
        string:org.biounlock.Manager1 2>/dev/null | grep -q 'boolean true'
}

# biounlockd's pid, or nothing when it is not running.
service_pid() {
    service_running || return 1
    dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \
        string:org.biounlock.Manager1 2>/dev/null | awk '/uint32/ { print $2 }'
}

service_stop() {
    local p
    for p in "${SERVICE_POLKITD_PID:-}" "${SERVICE_DBUS_PID:-}"; do
        [ -n "$p" ] || continue
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
}
