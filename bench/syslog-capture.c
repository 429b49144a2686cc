/*
 * syslog-capture.so: an LD_PRELOAD library for scripts/bench that appends every syslog message
 * of the process to the file named by $BENCH_SYSLOG ("PRIORITY MESSAGE" per line), so that the
 * errors the module logs while it lets a decision stand (a counter or an audit row it could not
 * write) are counted in the concurrency runs. This machine has no /dev/log to read them from.
 * Used only for those runs: it replaces a failed connect() per message by an open/write/close.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void capture(int priority, const char *format, va_list ap) {
    const char *path = getenv("BENCH_SYSLOG");
    if (!path) return;
    char line[2048];
    int n = snprintf(line, sizeof line, "%d ", priority & 7);
    if (n < 0) return;
    if (vsnprintf(line + n, sizeof line - (size_t)n - 1, format, ap) < 0) return;
    size_t len = strlen(line);
    for (size_t i = 0; i < len; i++)
        if (line[i] == '\n') line[i] = ' ';
    line[len++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    ssize_t ignored = write(fd, line, len); /* one write per line: O_APPEND keeps lines whole */
    (void)ignored;
    close(fd);
}

void vsyslog(int priority, const char *format, va_list ap) { capture(priority, format, ap); }
void __vsyslog_chk(int priority, int flag, const char *format, va_list ap) { (void)flag; capture(priority, format, ap); }
void syslog(int priority, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    capture(priority, format, ap);
    va_end(ap);
}
void __syslog_chk(int priority, int flag, const char *format, ...) {
    (void)flag;
    va_list ap;
    va_start(ap, format);
    capture(priority, format, ap);
    va_end(ap);
}
