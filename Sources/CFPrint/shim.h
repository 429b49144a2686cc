// libfprint-2 (with GLib/GIO). Function-like macros such as FP_DEVICE_ERROR are not
// importable by Swift; callers use fp_device_error_quark() and friends.
// Only the helper executable (biounlock-fprint) links this module: the PAM module never loads
// libfprint or GLib into its host.
#ifndef BIOUNLOCK_CFPRINT_SHIM_H
#define BIOUNLOCK_CFPRINT_SHIM_H
#include <fprint.h>
#include <glib-unix.h>

// syslog (variadic) is BiounlockSystem's SystemLog, through CSystem.

/// g_signal_connect is a macro: Swift calls this instead (no destroy notify, no flags).
static inline gulong biounlock_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags) 0);
}
#endif
