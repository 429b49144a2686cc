// GIO (GDBus, GVariant, GUnixFDList) for biounlockd and its clients (the CLI's user mode, the
// settings app). Only BiounlockBus imports this module; the PAM module never loads GLib.
#ifndef BIOUNLOCK_CGIO_SHIM_H
#define BIOUNLOCK_CGIO_SHIM_H
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>

/// g_signal_connect is a macro: Swift calls this instead (no destroy notify, no flags).
static inline gulong biounlock_gio_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags) 0);
}

/// G_VARIANT_TYPE (a macro): the type for a type string the caller knows to be valid.
static inline const GVariantType *biounlock_variant_type(const char *text) {
    return (const GVariantType *) text;
}
#endif
