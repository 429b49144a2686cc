// CCamera's simulated camera: a root-only socket takes FRAME/DARK/UNPLUG/SLEEP commands (see
// camera.c for the security choices).
#define _GNU_SOURCE
#include "camera_private.h"

static int parse_number(const uint8_t *text, size_t length, long max, long *value) {
    if (length == 0 || length > 6) return -1;
    long n = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return -1;
        n = n * 10 + (text[i] - '0');
    }
    if (n > max) return -1;
    *value = n;
    return 0;
}

enum command_kind { CMD_INVALID, CMD_FRAME, CMD_DARK, CMD_UNPLUG, CMD_SLEEP };

static enum command_kind parse(const uint8_t *bytes, size_t length, const uint8_t **argument, size_t *argument_length, long *number) {
    const uint8_t *space = memchr(bytes, ' ', length);
    size_t word = space ? (size_t)(space - bytes) : length;
    *argument = space ? space + 1 : NULL;
    *argument_length = space ? length - word - 1 : 0;
    if (word == 5 && memcmp(bytes, "FRAME", 5) == 0) {
        if (!space || *argument_length == 0 || *argument_length >= 4096 || (*argument)[0] != '/'
            || memchr(*argument, 0, *argument_length))
            return CMD_INVALID;
        return CMD_FRAME;
    }
    if (word == 4 && memcmp(bytes, "DARK", 4) == 0) return space ? CMD_INVALID : CMD_DARK;
    if (word == 6 && memcmp(bytes, "UNPLUG", 6) == 0) return space ? CMD_INVALID : CMD_UNPLUG;
    if (word == 5 && memcmp(bytes, "SLEEP", 5) == 0) {
        if (!space || parse_number(*argument, *argument_length, 600000, number) != 0) return CMD_INVALID;
        return CMD_SLEEP;
    }
    return CMD_INVALID;
}

int bu_camera_parse_command(const uint8_t *command, size_t length) {
    const uint8_t *argument;
    size_t argument_length;
    long number;
    if (command == NULL || length == 0 || length > 4200) return -1;
    return parse(command, length, &argument, &argument_length, &number) == CMD_INVALID ? -1 : 0;
}

static void set_bad(bu_camera *c, const char *why) {
    free(c->image);
    c->image = NULL;
    c->scene = SCENE_BAD;
    snprintf(c->problem, sizeof c->problem, "%s", why);
}

/// Reads a binary PGM (P5): "P5", width, height, maxval (1-65535), one whitespace, then the
/// pixels (one byte each, or two big-endian bytes above 255, of which the high byte is kept).
static void load_pgm(bu_camera *c, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return set_bad(c, "the frame file cannot be opened");
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || (unsigned long long)st.st_size > BU_CAMERA_MAX_FILE) {
        close(fd);
        return set_bad(c, "the frame file is not a regular file of at most 64 MiB");
    }
    size_t size = (size_t)st.st_size;
    uint8_t *bytes = malloc(size ? size : 1);
    if (bytes == NULL) {
        close(fd);
        return set_bad(c, "out of memory");
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, bytes + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    size_t at = 0;
    long fields[3];
    const char *why = NULL;
    if (got < 2 || bytes[0] != 'P' || bytes[1] != '5') {
        why = got == 0 ? "an empty frame" : "a frame that is not a binary PGM image";
        goto done;
    }
    at = 2;
    for (int k = 0; k < 3; k++) {
        // whitespace and comments, then digits
        for (;;) {
            while (at < got && (bytes[at] == ' ' || bytes[at] == '\t' || bytes[at] == '\n' || bytes[at] == '\r')) at++;
            if (at < got && bytes[at] == '#') {
                while (at < got && bytes[at] != '\n') at++;
                continue;
            }
            break;
        }
        size_t start = at;
        while (at < got && bytes[at] >= '0' && bytes[at] <= '9' && at - start < 7) at++;
        if (parse_number(bytes + start, at - start, 999999, &fields[k]) != 0) {
            why = "a PGM image with a damaged header";
            goto done;
        }
    }
    if (at >= got) {
        why = "a PGM image without pixels";
        goto done;
    }
    at++;  // the one whitespace byte after maxval
    long w = fields[0], h = fields[1], maxval = fields[2];
    if (w < 1 || h < 1 || w > BU_CAMERA_MAX_SIDE || h > BU_CAMERA_MAX_SIDE || maxval < 1 || maxval > 65535) {
        why = "a frame of an unsupported size";
        goto done;
    }
    size_t depth = maxval > 255 ? 2 : 1;
    size_t need = (size_t)w * (size_t)h * depth;
    if (got - at < need) {
        why = "a truncated frame";
        goto done;
    }
    uint8_t *image = malloc((size_t)w * (size_t)h);
    if (image == NULL) {
        why = "out of memory";
        goto done;
    }
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
        unsigned v = depth == 2 ? ((unsigned)bytes[at + 2 * i] << 8 | bytes[at + 2 * i + 1]) : bytes[at + i];
        image[i] = (uint8_t)(v * 255u / (unsigned)maxval);
    }
    free(c->image);
    c->image = image;
    c->image_width = (int)w;
    c->image_height = (int)h;
    c->scene = SCENE_IMAGE;
done:
    free(bytes);
    if (why) set_bad(c, why);
}

/// Takes the commands waiting on the control socket (each connection one command), without
/// waiting for any: `wait_ms` > 0 waits that long for the first one.
static void take_commands(bu_camera *c, int wait_ms) {
    for (int first = 1;; first = 0) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int r = poll(&p, 1, first ? wait_ms : 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return;
        int conn = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (conn < 0) return;
        uint8_t command[4200];
        size_t got = 0;
        long long until = bu_camera_now_ms() + 1000;  // a client gets one second to send its command
        while (got < sizeof command) {
            ssize_t n = recv(conn, command + got, sizeof command - got, 0);
            if (n > 0) {
                got += (size_t)n;
                continue;
            }
            if (n == 0) break;
            if (errno == EINTR) continue;
            if (errno != EAGAIN) break;
            long long left = until - bu_camera_now_ms();
            if (left <= 0) break;
            struct pollfd q = {.fd = conn, .events = POLLIN};
            poll(&q, 1, (int)left);
        }
        const uint8_t *argument;
        size_t argument_length;
        long number = 0;
        enum command_kind kind = got < sizeof command ? parse(command, got, &argument, &argument_length, &number) : CMD_INVALID;
        if (c->scene != SCENE_GONE) {
            switch (kind) {
            case CMD_FRAME: {
                char path[4096];
                memcpy(path, argument, argument_length);
                path[argument_length] = '\0';
                load_pgm(c, path);
                break;
            }
            case CMD_DARK:
                free(c->image);
                c->image = NULL;
                c->scene = SCENE_DARK;
                break;
            case CMD_UNPLUG:
                c->scene = SCENE_GONE;
                break;
            case CMD_SLEEP: {
                long long base = c->stall_until > bu_camera_now_ms() ? c->stall_until : bu_camera_now_ms();
                c->stall_until = base + number;
                break;
            }
            case CMD_INVALID:
                break;
            }
        }
        // Closing the connection is the reply: the command was taken.
        close(conn);
    }
}

bu_camera_status bu_camera_open_simulated(const char *socket_path, bu_camera **camera, bu_camera_info *info,
                                          char *error, size_t error_length) {
    if (socket_path == NULL || camera == NULL || info == NULL) return BU_CAMERA_ERROR;
    *camera = NULL;
    memset(info, 0, sizeof *info);
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(socket_path);
    if (length == 0 || length >= sizeof address.sun_path || socket_path[0] != '/') {
        bu_camera_say(error, error_length, "the simulated camera's socket path must be absolute and shorter than %zu bytes", sizeof address.sun_path);
        return BU_CAMERA_ERROR;
    }
    // bind() under a private name in the same directory, chmod 0600, then rename into place.
    char staging[sizeof address.sun_path];
    const char *slash = strrchr(socket_path, '/');
    int dir = (int)(slash - socket_path);
    if (snprintf(staging, sizeof staging, "%.*s/.cam-%d", dir, socket_path, (int)getpid()) >= (int)sizeof staging) {
        bu_camera_say(error, error_length, "the simulated camera's directory path is too long");
        return BU_CAMERA_ERROR;
    }
    struct stat st;
    if (lstat(socket_path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            bu_camera_say(error, error_length, "%s exists and is not a socket", socket_path);
            return BU_CAMERA_ERROR;
        }
        unlink(socket_path);
    }
    unlink(staging);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        bu_camera_say(error, error_length, "socket: %s", strerror(errno));
        return BU_CAMERA_ERROR;
    }
    memcpy(address.sun_path, staging, strlen(staging) + 1);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || chmod(staging, 0600) != 0
        || rename(staging, socket_path) != 0 || listen(fd, 16) != 0) {
        bu_camera_say(error, error_length, "cannot listen on %s: %s", socket_path, strerror(errno));
        unlink(staging);
        close(fd);
        return BU_CAMERA_ERROR;
    }
    bu_camera *c = calloc(1, sizeof *c);
    if (c == NULL) {
        unlink(socket_path);
        close(fd);
        return BU_CAMERA_ERROR;
    }
    c->simulated = 1;
    c->fd = fd;
    c->queued = -1;
    c->scene = SCENE_DARK;
    memcpy(c->path, socket_path, length + 1);
    snprintf(info->driver, sizeof info->driver, "simulated");
    snprintf(info->card, sizeof info->card, "Simulated camera (control socket)");
    snprintf(info->format, sizeof info->format, "SIM");
    info->width = 640;
    info->height = 480;
    info->greyscale = 1;
    *camera = c;
    return BU_CAMERA_OK;
}

bu_camera_status bu_camera_simulated_capture(bu_camera *c, int timeout_ms, bu_frame *frame, char *error, size_t error_length) {
    long long deadline = bu_camera_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    take_commands(c, 0);
    // A stalled camera: no frame until stall_until (commands still taken meanwhile).
    while (c->scene != SCENE_GONE && c->stall_until > bu_camera_now_ms()) {
        long long left = (c->stall_until < deadline ? c->stall_until : deadline) - bu_camera_now_ms();
        if (left <= 0) return BU_CAMERA_TIMEOUT;
        take_commands(c, (int)left);
        if (bu_camera_now_ms() >= deadline && c->stall_until > bu_camera_now_ms()) return BU_CAMERA_TIMEOUT;
    }
    memset(frame, 0, sizeof *frame);
    switch (c->scene) {
    case SCENE_GONE:
        bu_camera_say(error, error_length, "the camera was unplugged");
        return BU_CAMERA_GONE;
    case SCENE_BAD:
        frame->kind = BU_FRAME_BAD;
        snprintf(frame->problem, sizeof frame->problem, "%s", c->problem);
        return BU_CAMERA_OK;
    case SCENE_DARK:
        if (c->image == NULL || c->image_width != 640 || c->image_height != 480) {
            free(c->image);
            c->image = calloc(640u * 480u, 1);
            if (c->image == NULL) {
                bu_camera_say(error, error_length, "out of memory");
                return BU_CAMERA_ERROR;
            }
            c->image_width = 640;
            c->image_height = 480;
        }
        // a black image
        __attribute__((fallthrough));
    case SCENE_IMAGE:
        frame->kind = BU_FRAME_GREY;
        frame->pixels = c->image;
        frame->width = c->image_width;
        frame->height = c->image_height;
        frame->stride = c->image_width;
        frame->length = (size_t)c->image_width * (size_t)c->image_height;
        return BU_CAMERA_OK;
    }
    return BU_CAMERA_ERROR;
}

void bu_camera_simulated_close(bu_camera *c) {
    close(c->fd);
    unlink(c->path);
    free(c->image);
}
