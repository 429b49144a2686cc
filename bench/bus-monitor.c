/*
 * bus-monitor: when fprintd answered each VerifyStart, on a private bus (bench/touch-bench).
 * A benchmark tool, not a test.
 *
 *   bus-monitor ADDRESS     prints "verifystart-return T DESTINATION ok|error" (T: CLOCK_MONOTONIC,
 *                           us) for every reply to a VerifyStart call, and "verifystatus T RESULT"
 *                           for every VerifyStatus signal, as the bus passes them on
 *
 * It becomes a monitor (org.freedesktop.DBus.Monitoring.BecomeMonitor) for VerifyStart calls and
 * all replies, and pairs each reply with its call by (caller, serial). A monitor only listens: from
 * BecomeMonitor's reply on, the filter drops every message before GDBus could act on it. The time is taken on GDBus's worker
 * thread as the message is read, on the clock touch-latency uses.
 */
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define CALLS 256
static struct { char caller[64]; guint32 serial; } calls[CALLS];
static int next_call;
static GMutex lock;
/* Set by the filter when it passes BecomeMonitor's reply on: everything after it is dropped. */
static volatile int monitoring;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static GDBusMessage *filter(GDBusConnection *c, GDBusMessage *m, gboolean incoming, gpointer data) {
    (void)c; (void)data;
    if (!incoming) return m;
    double t = now_us();
    if (!monitoring) {
        // Installed before BecomeMonitor: its reply (the bus's only one since Hello) goes to the caller.
        if (g_dbus_message_get_message_type(m) == G_DBUS_MESSAGE_TYPE_METHOD_RETURN
            && g_strcmp0(g_dbus_message_get_sender(m), "org.freedesktop.DBus") == 0) monitoring = 1;
        return m;
    }
    GDBusMessageType type = g_dbus_message_get_message_type(m);
    g_mutex_lock(&lock);
    if (type == G_DBUS_MESSAGE_TYPE_METHOD_CALL && g_strcmp0(g_dbus_message_get_member(m), "VerifyStart") == 0) {
        const char *sender = g_dbus_message_get_sender(m);
        snprintf(calls[next_call].caller, sizeof calls[next_call].caller, "%s", sender ? sender : "");
        calls[next_call].serial = g_dbus_message_get_serial(m);
        next_call = (next_call + 1) % CALLS;
    } else if (type == G_DBUS_MESSAGE_TYPE_SIGNAL && g_strcmp0(g_dbus_message_get_member(m), "VerifyStatus") == 0) {
        GVariant *body = g_dbus_message_get_body(m);
        const char *result = "?";
        if (body && g_variant_is_of_type(body, G_VARIANT_TYPE("(sb)"))) g_variant_get(body, "(&sb)", &result, NULL);
        printf("verifystatus %.1f %s\n", t, result);
        fflush(stdout);
    } else if (type == G_DBUS_MESSAGE_TYPE_METHOD_RETURN || type == G_DBUS_MESSAGE_TYPE_ERROR) {
        const char *destination = g_dbus_message_get_destination(m);
        guint32 serial = g_dbus_message_get_reply_serial(m);
        for (int i = 0; i < CALLS; i++) {
            if (calls[i].serial == serial && destination && strcmp(calls[i].caller, destination) == 0) {
                printf("verifystart-return %.1f %s %s\n", t, destination, type == G_DBUS_MESSAGE_TYPE_ERROR ? "error" : "ok");
                fflush(stdout);
                calls[i].serial = 0;
                break;
            }
        }
    }
    g_mutex_unlock(&lock);
    g_object_unref(m);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: bus-monitor ADDRESS\n"); return 64; }
    GError *error = NULL;
    GDBusConnection *c = g_dbus_connection_new_for_address_sync(argv[1],
        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &error);
    if (!c) { fprintf(stderr, "bus-monitor: %s\n", error->message); return 1; }
    const char *rules[] = { "type='method_call',member='VerifyStart'", "type='method_return'", "type='error'",
                            "type='signal',interface='net.reactivated.Fprint.Device',member='VerifyStatus'", NULL };
    g_dbus_connection_add_filter(c, filter, NULL, NULL);
    GVariant *r = g_dbus_connection_call_sync(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.Monitoring",
                                              "BecomeMonitor", g_variant_new("(^asu)", rules, 0), NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
    if (!r) { fprintf(stderr, "bus-monitor: BecomeMonitor: %s\n", error->message); return 1; }
    g_variant_unref(r);
    printf("monitoring\n");
    fflush(stdout);
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(loop);
    return 0;
}
