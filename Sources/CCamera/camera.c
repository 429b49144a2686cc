// CCamera: V4L2 cameras and the simulated camera (include/camera.h).
//
// A C target rather than Swift over BiounlockSystem: V4L2 is a set of ioctls on kernel structs
// (videodev2.h), which Swift cannot call (ioctl is variadic) without a shim per request; the
// whole camera is smaller as one C file. Linked into biounlock-face only, never into the module.
//
// Security choices:
// - the device is opened O_RDWR|O_NONBLOCK|O_CLOEXEC|O_NOCTTY and must be a character device;
// - every size the driver reports is checked (bytesused against the format's size, sides within
//   BU_CAMERA_MAX_SIDE) before a byte is read: a short or oversized buffer is a BAD frame;
// - the simulated camera's socket is bound under a private name, made 0600 and renamed into
//   place, so only root can drive it; a FRAME file is read with O_NOFOLLOW, at most
//   BU_CAMERA_MAX_FILE bytes, and parsed as binary PGM (P5) with every header field checked.
#define _GNU_SOURCE
#include "camera.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BUFFERS 4

struct mapped {
    void *start;
    size_t length;
};

typedef enum { SCENE_DARK, SCENE_IMAGE, SCENE_BAD, SCENE_GONE } scene_kind;

struct bu_camera {
    int simulated;
    int fd;  // V4L2 device, or the listening socket
    // V4L2
    uint32_t pixelformat;
    int width, height, bytesperline;
    uint32_t sizeimage;
    struct mapped buffers[BUFFERS];
    unsigned count;
    int queued;  // index of the buffer dequeued last, re-queued at the next capture; -1 none
    uint8_t *grey;  // conversion buffer (Y16, YUYV)
    // simulated
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    scene_kind scene;
    uint8_t *image;
    int image_width, image_height;
    char problem[96];
    long long stall_until;  // monotonic ms; frames wait until then
};

static void say(char *error, size_t length, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void say(char *error, size_t length, const char *format, ...) {
    if (error == NULL || length == 0) return;
    va_list args;
    va_start(args, format);
    vsnprintf(error, length, format, args);
    va_end(args);
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int xioctl(int fd, unsigned long request, void *arg) {
    int r;
    do r = ioctl(fd, request, arg);
    while (r == -1 && errno == EINTR);
    return r;
}

static void fourcc_text(uint32_t f, char out[8]) {
    out[0] = (char)(f & 0xff);
    out[1] = (char)((f >> 8) & 0xff);
    out[2] = (char)((f >> 16) & 0xff);
    out[3] = (char)((f >> 24) & 0xff);
    out[4] = '\0';
    for (int i = 0; i < 4; i++)
        if (out[i] < 0x20 || out[i] > 0x7e) out[i] = '?';
}

// MARK: V4L2

static int greyscale_format(uint32_t f) { return f == V4L2_PIX_FMT_GREY || f == V4L2_PIX_FMT_Y16; }
static int colour_format(uint32_t f) { return f == V4L2_PIX_FMT_YUYV || f == V4L2_PIX_FMT_MJPEG; }

/// The format to use: greyscale first (GREY, then Y16); colour (YUYV, then MJPEG) only when allowed.
static uint32_t choose_format(int fd, int allow_rgb) {
    const uint32_t order[] = {V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_Y16, V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_MJPEG};
    int offered[4] = {0, 0, 0, 0};
    for (unsigned i = 0; i < 64; i++) {
        struct v4l2_fmtdesc d;
        memset(&d, 0, sizeof d);
        d.index = i;
        d.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        if (xioctl(fd, VIDIOC_ENUM_FMT, &d) != 0) break;
        for (int k = 0; k < 4; k++)
            if (d.pixelformat == order[k]) offered[k] = 1;
    }
    for (int k = 0; k < 4; k++) {
        if (!offered[k]) continue;
        if (colour_format(order[k]) && !allow_rgb) continue;
        return order[k];
    }
    return 0;
}

static void unmap_all(bu_camera *c) {
    for (unsigned i = 0; i < c->count; i++)
        if (c->buffers[i].start && c->buffers[i].start != MAP_FAILED) munmap(c->buffers[i].start, c->buffers[i].length);
    c->count = 0;
}

bu_camera_status bu_camera_open_v4l2(const char *path, int allow_rgb, bu_camera **camera, bu_camera_info *info,
                                     char *error, size_t error_length) {
    if (path == NULL || camera == NULL || info == NULL) return BU_CAMERA_ERROR;
    *camera = NULL;
    memset(info, 0, sizeof *info);
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        say(error, error_length, "cannot open %s: %s", path, strerror(e));
        return e == ENOENT || e == ENODEV || e == ENXIO ? BU_CAMERA_GONE : BU_CAMERA_ERROR;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
        say(error, error_length, "%s is not a character device", path);
        close(fd);
        return BU_CAMERA_ERROR;
    }
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    if (xioctl(fd, VIDIOC_QUERYCAP, &cap) != 0) {
        say(error, error_length, "%s is not a V4L2 device: %s", path, strerror(errno));
        close(fd);
        return BU_CAMERA_ERROR;
    }
    uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING)) {
        say(error, error_length, "%s cannot stream video", path);
        close(fd);
        return BU_CAMERA_ERROR;
    }
    snprintf(info->driver, sizeof info->driver, "%.31s", (const char *)cap.driver);
    snprintf(info->card, sizeof info->card, "%.63s", (const char *)cap.card);
    uint32_t format = choose_format(fd, allow_rgb);
    if (format == 0) {
        say(error, error_length, allow_rgb ? "%s offers no format biounlock reads (GREY, Y16, YUYV, MJPEG)"
                                           : "%s offers no greyscale format (GREY, Y16): not an infrared camera; face_allow_rgb=yes takes a colour camera", path);
        close(fd);
        return allow_rgb ? BU_CAMERA_ERROR : BU_CAMERA_REFUSED;
    }
    struct v4l2_format f;
    memset(&f, 0, sizeof f);
    f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    f.fmt.pix.pixelformat = format;
    f.fmt.pix.width = 640;
    f.fmt.pix.height = 480;
    f.fmt.pix.field = V4L2_FIELD_NONE;
    if (xioctl(fd, VIDIOC_S_FMT, &f) != 0 || f.fmt.pix.pixelformat != format) {
        say(error, error_length, "%s refused its own format: %s", path, strerror(errno));
        close(fd);
        return BU_CAMERA_ERROR;
    }
    int w = (int)f.fmt.pix.width, h = (int)f.fmt.pix.height;
    if (w < 16 || h < 16 || w > BU_CAMERA_MAX_SIDE || h > BU_CAMERA_MAX_SIDE) {
        say(error, error_length, "%s gives frames of %dx%d", path, w, h);
        close(fd);
        return BU_CAMERA_ERROR;
    }
    bu_camera *c = calloc(1, sizeof *c);
    if (c == NULL) {
        close(fd);
        return BU_CAMERA_ERROR;
    }
    c->fd = fd;
    c->queued = -1;
    c->pixelformat = format;
    c->width = w;
    c->height = h;
    int bpp = format == V4L2_PIX_FMT_GREY ? 1 : 2;
    c->bytesperline = (int)f.fmt.pix.bytesperline >= w * bpp ? (int)f.fmt.pix.bytesperline : w * bpp;
    c->sizeimage = f.fmt.pix.sizeimage;
    if (format != V4L2_PIX_FMT_GREY && format != V4L2_PIX_FMT_MJPEG) {
        c->grey = malloc((size_t)w * (size_t)h);
        if (c->grey == NULL) goto fail;
    }
    struct v4l2_requestbuffers req;
    memset(&req, 0, sizeof req);
    req.count = BUFFERS;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    if (xioctl(fd, VIDIOC_REQBUFS, &req) != 0 || req.count < 1) {
        say(error, error_length, "%s: cannot get buffers: %s", path, strerror(errno));
        goto fail;
    }
    for (unsigned i = 0; i < req.count && i < BUFFERS; i++) {
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = i;
        if (xioctl(fd, VIDIOC_QUERYBUF, &b) != 0) goto fail_errno;
        c->buffers[i].length = b.length;
        c->buffers[i].start = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
        c->count = i + 1;
        if (c->buffers[i].start == MAP_FAILED) goto fail_errno;
        if (xioctl(fd, VIDIOC_QBUF, &b) != 0) goto fail_errno;
    }
    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd, VIDIOC_STREAMON, &type) != 0) goto fail_errno;
    fourcc_text(format, info->format);
    info->width = w;
    info->height = h;
    info->greyscale = greyscale_format(format);
    *camera = c;
    return BU_CAMERA_OK;
fail_errno:
    say(error, error_length, "%s: cannot map its buffers: %s", path, strerror(errno));
fail:
    unmap_all(c);
    free(c->grey);
    close(fd);
    free(c);
    return BU_CAMERA_ERROR;
}

static bu_camera_status v4l2_capture(bu_camera *c, int timeout_ms, bu_frame *frame, char *error, size_t error_length) {
    if (c->queued >= 0) {
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = (unsigned)c->queued;
        c->queued = -1;
        if (xioctl(c->fd, VIDIOC_QBUF, &b) != 0) {
            say(error, error_length, "cannot give the buffer back: %s", strerror(errno));
            return errno == ENODEV ? BU_CAMERA_GONE : BU_CAMERA_ERROR;
        }
    }
    long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        long long left = deadline - now_ms();
        if (left < 0) left = 0;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            say(error, error_length, "poll: %s", strerror(errno));
            return BU_CAMERA_ERROR;
        }
        if (r == 0) return BU_CAMERA_TIMEOUT;
        if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) {
            say(error, error_length, "the camera went away");
            return BU_CAMERA_GONE;
        }
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        if (xioctl(c->fd, VIDIOC_DQBUF, &b) != 0) {
            if (errno == EAGAIN) continue;
            say(error, error_length, "cannot take a frame: %s", strerror(errno));
            return errno == ENODEV ? BU_CAMERA_GONE : BU_CAMERA_ERROR;
        }
        if (b.index >= c->count) {
            say(error, error_length, "the driver returned an unknown buffer");
            return BU_CAMERA_ERROR;
        }
        c->queued = (int)b.index;
        const uint8_t *data = c->buffers[b.index].start;
        size_t used = b.bytesused <= c->buffers[b.index].length ? b.bytesused : 0;
        memset(frame, 0, sizeof *frame);
        frame->width = c->width;
        frame->height = c->height;
        if (b.flags & V4L2_BUF_FLAG_ERROR) {
            frame->kind = BU_FRAME_BAD;
            snprintf(frame->problem, sizeof frame->problem, "the driver marked the frame damaged");
            return BU_CAMERA_OK;
        }
        size_t rows = (size_t)c->height, line = (size_t)c->bytesperline;
        switch (c->pixelformat) {
        case V4L2_PIX_FMT_MJPEG:
            frame->kind = used > 0 ? BU_FRAME_JPEG : BU_FRAME_BAD;
            frame->pixels = data;
            frame->length = used;
            if (used == 0) snprintf(frame->problem, sizeof frame->problem, "an empty JPEG frame");
            return BU_CAMERA_OK;
        case V4L2_PIX_FMT_GREY:
            if (used < line * (rows - 1) + (size_t)c->width) break;
            frame->kind = BU_FRAME_GREY;
            frame->pixels = data;
            frame->stride = (int)line;
            frame->length = used;
            return BU_CAMERA_OK;
        case V4L2_PIX_FMT_Y16:  // little-endian 16-bit: keep the high byte
        case V4L2_PIX_FMT_YUYV:  // Y0 U Y1 V: keep the luma
            if (used < line * (rows - 1) + (size_t)c->width * 2) break;
            for (size_t y = 0; y < rows; y++) {
                const uint8_t *row = data + y * line;
                uint8_t *out = c->grey + y * (size_t)c->width;
                if (c->pixelformat == V4L2_PIX_FMT_Y16)
                    for (int x = 0; x < c->width; x++) out[x] = row[2 * x + 1];
                else
                    for (int x = 0; x < c->width; x++) out[x] = row[2 * x];
            }
            frame->kind = BU_FRAME_GREY;
            frame->pixels = c->grey;
            frame->stride = c->width;
            frame->length = (size_t)c->width * rows;
            return BU_CAMERA_OK;
        }
        frame->kind = BU_FRAME_BAD;
        snprintf(frame->problem, sizeof frame->problem, "a short frame (%zu bytes)", used);
        return BU_CAMERA_OK;
    }
}

// MARK: the simulated camera

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
        long long until = now_ms() + 1000;  // a client gets one second to send its command
        while (got < sizeof command) {
            ssize_t n = recv(conn, command + got, sizeof command - got, 0);
            if (n > 0) {
                got += (size_t)n;
                continue;
            }
            if (n == 0) break;
            if (errno == EINTR) continue;
            if (errno != EAGAIN) break;
            long long left = until - now_ms();
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
                long long base = c->stall_until > now_ms() ? c->stall_until : now_ms();
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
        say(error, error_length, "the simulated camera's socket path must be absolute and shorter than %zu bytes", sizeof address.sun_path);
        return BU_CAMERA_ERROR;
    }
    // bind() under a private name in the same directory, chmod 0600, then rename into place.
    char staging[sizeof address.sun_path];
    const char *slash = strrchr(socket_path, '/');
    int dir = (int)(slash - socket_path);
    if (snprintf(staging, sizeof staging, "%.*s/.cam-%d", dir, socket_path, (int)getpid()) >= (int)sizeof staging) {
        say(error, error_length, "the simulated camera's directory path is too long");
        return BU_CAMERA_ERROR;
    }
    struct stat st;
    if (lstat(socket_path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            say(error, error_length, "%s exists and is not a socket", socket_path);
            return BU_CAMERA_ERROR;
        }
        unlink(socket_path);
    }
    unlink(staging);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        say(error, error_length, "socket: %s", strerror(errno));
        return BU_CAMERA_ERROR;
    }
    memcpy(address.sun_path, staging, strlen(staging) + 1);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || chmod(staging, 0600) != 0
        || rename(staging, socket_path) != 0 || listen(fd, 16) != 0) {
        say(error, error_length, "cannot listen on %s: %s", socket_path, strerror(errno));
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

static bu_camera_status simulated_capture(bu_camera *c, int timeout_ms, bu_frame *frame, char *error, size_t error_length) {
    long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    take_commands(c, 0);
    // A stalled camera: no frame until stall_until (commands still taken meanwhile).
    while (c->scene != SCENE_GONE && c->stall_until > now_ms()) {
        long long left = (c->stall_until < deadline ? c->stall_until : deadline) - now_ms();
        if (left <= 0) return BU_CAMERA_TIMEOUT;
        take_commands(c, (int)left);
        if (now_ms() >= deadline && c->stall_until > now_ms()) return BU_CAMERA_TIMEOUT;
    }
    memset(frame, 0, sizeof *frame);
    switch (c->scene) {
    case SCENE_GONE:
        say(error, error_length, "the camera was unplugged");
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
                say(error, error_length, "out of memory");
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

bu_camera_status bu_camera_capture(bu_camera *camera, int timeout_ms, bu_frame *frame, char *error, size_t error_length) {
    if (camera == NULL || frame == NULL) return BU_CAMERA_ERROR;
    return camera->simulated ? simulated_capture(camera, timeout_ms, frame, error, error_length)
                             : v4l2_capture(camera, timeout_ms, frame, error, error_length);
}

void bu_camera_close(bu_camera *camera) {
    if (camera == NULL) return;
    if (camera->simulated) {
        close(camera->fd);
        unlink(camera->path);
        free(camera->image);
    } else {
        enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        xioctl(camera->fd, VIDIOC_STREAMOFF, &type);
        unmap_all(camera);
        free(camera->grey);
        close(camera->fd);
    }
    free(camera);
}
