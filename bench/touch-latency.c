/*
 * touch-latency: what a touch costs through a real fingerprint path -- scripts/bench's section 6
 * (bench/touch-bench runs it). A benchmark, not a test: it asserts no time.
 *
 *   touch-latency --confdir DIR --service S --user U --socket VD --id ID --case LABEL
 *                 [--n N] [--warmup W] [--delay-ms MS]
 *
 * Each round is one PAM transaction (pam_start_confdir + pam_authenticate + pam_end). When the
 * module shows its touch request (a PAM_TEXT_INFO or PAM_ERROR_MSG naming the finger or the
 * reader), the reader is ready to be touched; a finger thread then waits MS milliseconds (so that
 * the verification surely runs) and plays the touch: `SCAN ID` on libfprint's virtual_device
 * socket VD (connect, write, half-close, wait for the device to close: the command was taken).
 * Printed, in microseconds, one line:
 *   case=LABEL n=N errors=E ready_median_us= ready_p90_us= touch_median_us= touch_p90_us=
 *        total_median_us= first_error=
 * ready: from pam_authenticate's start to the touch request (helper started, daemon reached,
 * reader claimed or opened); touch: from the touch being taken by the device to pam_authenticate
 * returning (the match travelling back, the reader released, the audit written); total: the
 * whole pam_authenticate. A result other than PAM_SUCCESS, or no touch request, is an error.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *sock_path, *scan_id;
static long delay_ms = 100;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct round {
    double ready, touched;
    int prompted;
    pthread_t finger;
    int finger_started;
};
static struct round current;

static void *finger(void *arg) {
    (void)arg;
    usleep((useconds_t)delay_ms * 1000);
    char command[256];
    snprintf(command, sizeof command, "SCAN %s", scan_id);
    for (int attempt = 0; attempt < 500; attempt++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        strncpy(a.sun_path, sock_path, sizeof a.sun_path - 1);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            if (write(fd, command, strlen(command)) == (ssize_t)strlen(command)) {
                shutdown(fd, SHUT_WR);
                char b[64];
                while (read(fd, b, sizeof b) > 0) {}
                current.touched = now_us();
            }
            close(fd);
            return NULL;
        }
        if (fd >= 0) close(fd);
        usleep(2000);
    }
    return NULL;
}

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    (void)data;
    struct pam_response *r = calloc((size_t)n, sizeof *r);
    if (!r) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        const char *text = msg[i]->msg ? msg[i]->msg : "";
        if ((msg[i]->msg_style == PAM_TEXT_INFO || msg[i]->msg_style == PAM_ERROR_MSG) && !current.prompted
            && (strstr(text, "finger") || strstr(text, "reader"))) {
            current.prompted = 1;
            current.ready = now_us();
            current.finger_started = pthread_create(&current.finger, NULL, finger, NULL) == 0;
        }
        if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF || msg[i]->msg_style == PAM_PROMPT_ECHO_ON) r[i].resp = strdup("");
    }
    *resp = r;
    return PAM_SUCCESS;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *t, long n, double p) {
    if (n == 0) return 0;
    qsort(t, (size_t)n, sizeof *t, cmp);
    long rank = (long)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return t[rank - 1];
}

int main(int argc, char **argv) {
    const char *confdir = NULL, *service = NULL, *user = NULL, *label = "case";
    long n = 20, warmup = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--confdir")) confdir = argv[i + 1];
        else if (!strcmp(argv[i], "--service")) service = argv[i + 1];
        else if (!strcmp(argv[i], "--user")) user = argv[i + 1];
        else if (!strcmp(argv[i], "--socket")) sock_path = argv[i + 1];
        else if (!strcmp(argv[i], "--id")) scan_id = argv[i + 1];
        else if (!strcmp(argv[i], "--case")) label = argv[i + 1];
        else if (!strcmp(argv[i], "--n")) n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--delay-ms")) delay_ms = atol(argv[i + 1]);
        else { fprintf(stderr, "touch-latency: unknown argument %s\n", argv[i]); return 64; }
    }
    if (!confdir || !service || !user || !sock_path || !scan_id || n < 1) {
        fprintf(stderr, "usage: touch-latency --confdir DIR --service S --user U --socket VD --id ID --case LABEL [--n N]\n");
        return 64;
    }
    double *ready = calloc((size_t)n, sizeof(double)), *touch = calloc((size_t)n, sizeof(double)),
           *total = calloc((size_t)n, sizeof(double));
    long errors = 0, kept = 0;
    int first_error = -1;
    for (long round = 0; round < warmup + n; round++) {
        memset(&current, 0, sizeof current);
        struct pam_conv conv = { conversation, NULL };
        pam_handle_t *pamh = NULL;
        int rc = pam_start_confdir(service, user, &conv, confdir, &pamh);
        double start = now_us();
        if (rc == PAM_SUCCESS) rc = pam_authenticate(pamh, 0);
        double end = now_us();
        if (pamh) pam_end(pamh, rc);
        if (current.finger_started) pthread_join(current.finger, NULL);
        if (round < warmup) continue;
        if (rc != PAM_SUCCESS || !current.prompted || current.touched == 0) {
            errors++;
            if (first_error == -1) first_error = rc;
            continue;
        }
        ready[kept] = current.ready - start;
        touch[kept] = end - current.touched;
        total[kept] = end - start;
        kept++;
    }
    printf("case=%s n=%ld errors=%ld ready_median_us=%.1f ready_p90_us=%.1f touch_median_us=%.1f touch_p90_us=%.1f "
           "total_median_us=%.1f first_error=", label, kept, errors, pct(ready, kept, 50), pct(ready, kept, 90),
           pct(touch, kept, 50), pct(touch, kept, 90), pct(total, kept, 50));
    if (first_error == -1) printf("-\n");
    else if (first_error == PAM_SUCCESS) printf("no-touch-request\n");
    else printf("pam-%d\n", first_error);
    return 0;
}
