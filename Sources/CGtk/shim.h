// GTK 4 and libadwaita 1 (Debian 12: GTK 4.8, libadwaita 1.2) for biounlock-settings only.
// Only BiounlockGtk imports this module; nothing else of biounlock loads a UI toolkit.
// What Swift cannot call directly (macros, variadic functions) is wrapped here, one line each.
#ifndef BIOUNLOCK_CGTK_SHIM_H
#define BIOUNLOCK_CGTK_SHIM_H
#include <gtk/gtk.h>
#include <adwaita.h>

/// g_signal_connect_data with a destroy notify (the Swift closure box is released with it).
static inline gulong biounlock_gtk_connect(gpointer instance, const char *signal, GCallback handler, gpointer data,
                                           GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags) 0);
}

/// gtk_accessible_update_property is variadic: the accessible name (label) of a widget.
static inline void biounlock_gtk_accessible_label(GtkWidget *widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

/// ... and its description (read after the name by a screen reader).
static inline void biounlock_gtk_accessible_description(GtkWidget *widget, const char *text) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

/// g_object_set for one string property (variadic in C).
static inline void biounlock_gtk_set_string(gpointer object, const char *property, const char *value) {
    g_object_set(object, property, value, NULL);
}
/// ... and one boolean property.
static inline void biounlock_gtk_set_bool(gpointer object, const char *property, gboolean value) {
    g_object_set(object, property, value, NULL);
}
#endif
