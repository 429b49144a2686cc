/*
 * sim-finger: keeps a simulated touch "queued" for scripts/bench.
 *
 *   sim-finger SOCKET ID
 *
 * The simulated sensor creates its control socket when a verification starts and removes it
 * when the verification ends, so a touch cannot be sent ahead of time. This helper watches the
 * socket's directory with inotify and connects the moment the socket appears, sends
 * "SCAN ID", half-closes and waits for the sensor to close the connection (the command was
 * taken); then it waits for the next socket. The module therefore finds a connection already
 * waiting in the listen backlog when it first polls: the touch costs no waiting, only the
 * socket work on both sides.
 *
 * Runs until SIGTERM/SIGINT (or until the directory disappears); prints the number of touches
 * the sensor took on exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop = 0;
static void on_signal(int sig) { (void)sig; stop = 1; }

/* One attempt: 1 when the sensor took the touch, 0 when nobody listens (yet), -1 on a lost touch. */
static int touch(const struct sockaddr_un *addr, const char *cmd, size_t len) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
        close(fd);
        return 0;
    }
    int ok = write(fd, cmd, len) == (ssize_t)len;
    shutdown(fd, SHUT_WR);
    /* The sensor closes the connection once it has read the command: EOF is the reply. */
    struct pollfd p = {fd, POLLIN, 0};
    char buf[64];
    int taken = 0;
    while (!stop && ok) {
        int rc = poll(&p, 1, 2000);
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) break;
        ssize_t r = read(fd, buf, sizeof buf);
        if (r == 0) { taken = 1; break; }
        if (r < 0 && errno != EINTR) break; /* ECONNRESET: the listener closed before accepting */
    }
    close(fd);
    return taken ? 1 : -1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: sim-finger SOCKET ID\n");
        return 64;
    }
    const char *path = argv[1];
    char cmd[256];
    int len = snprintf(cmd, sizeof cmd, "SCAN %s", argv[2]);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (len <= 0 || (size_t)len >= sizeof cmd || strlen(path) >= sizeof addr.sun_path) {
        fprintf(stderr, "sim-finger: socket path or id too long\n");
        return 64;
    }
    strcpy(addr.sun_path, path);

    char dir[sizeof addr.sun_path];
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    // The sensor binds its socket under a private name and renames it into place (IN_MOVED_TO).
    if (in < 0 || inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR) < 0) {
        perror("sim-finger: inotify");
        return 1;
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    long taken = 0, lost = 0;
    char events[4096] __attribute__((aligned(8)));
    /* pending: a socket was created that has not taken a touch yet. The socket may already be
     * waiting when we start, so begin pending. A socket that took its touch is never touched
     * again (it is about to close); a pending one is retried until it takes one or disappears
     * (its verification ended without us), however long the module takes between bind() and
     * listen() on a loaded machine. */
    int pending = 1;
    while (!stop) {
        while (pending && !stop) {
            int r = touch(&addr, cmd, (size_t)len);
            if (r > 0) { taken++; pending = 0; break; }
            if (r < 0) lost++;
            if (access(path, F_OK) != 0) { pending = 0; break; } /* gone: nothing to touch */
            struct timespec ts = {0, 50000};                  /* bound, not listening yet: 50 us */
            nanosleep(&ts, NULL);
        }
        struct pollfd p = {in, POLLIN, 0};
        int rc = poll(&p, 1, 200);
        if (rc <= 0) continue;
        ssize_t got;
        while ((got = read(in, events, sizeof events)) > 0) {
            for (char *e = events; e < events + got;) {
                struct inotify_event *ev = (struct inotify_event *)e;
                if (ev->mask & (IN_DELETE_SELF | IN_IGNORED)) stop = 1;
                if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && ev->len && strcmp(ev->name, base) == 0) pending = 1;
                e += sizeof *ev + ev->len;
            }
        }
    }
    printf("sim-finger: %ld touches taken, %ld lost\n", taken, lost);
    return 0;
}
