// CCamera's V4L2 cameras (see camera.c for the security choices).
#define _GNU_SOURCE
#include "camera_private.h"

static void fourcc_text(uint32_t f, char out[8]) {
    out[0] = (char)(f & 0xff);
    out[1] = (char)((f >> 8) & 0xff);
    out[2] = (char)((f >> 16) & 0xff);
    out[3] = (char)((f >> 24) & 0xff);
    out[4] = '\0';
    for (int i = 0; i < 4; i++)
        if (out[i] < 0x20 || out[i] > 0x7e) out[i] = '?';
}

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
        if (bu_camera_xioctl(fd, VIDIOC_ENUM_FMT, &d) != 0) break;
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
        bu_camera_say(error, error_length, "cannot open %s: %s", path, strerror(e));
        return e == ENOENT || e == ENODEV || e == ENXIO ? BU_CAMERA_GONE : BU_CAMERA_ERROR;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
        bu_camera_say(error, error_length, "%s is not a character device", path);
        close(fd);
        return BU_CAMERA_ERROR;
    }
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    if (bu_camera_xioctl(fd, VIDIOC_QUERYCAP, &cap) != 0) {
        bu_camera_say(error, error_length, "%s is not a V4L2 device: %s", path, strerror(errno));
        close(fd);
        return BU_CAMERA_ERROR;
    }
    uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING)) {
        bu_camera_say(error, error_length, "%s cannot stream video", path);
        close(fd);
        return BU_CAMERA_ERROR;
    }
    snprintf(info->driver, sizeof info->driver, "%.31s", (const char *)cap.driver);
    snprintf(info->card, sizeof info->card, "%.63s", (const char *)cap.card);
    uint32_t format = choose_format(fd, allow_rgb);
    if (format == 0) {
        bu_camera_say(error, error_length, allow_rgb ? "%s offers no format biounlock reads (GREY, Y16, YUYV, MJPEG)"
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
    if (bu_camera_xioctl(fd, VIDIOC_S_FMT, &f) != 0 || f.fmt.pix.pixelformat != format) {
        bu_camera_say(error, error_length, "%s refused its own format: %s", path, strerror(errno));
        close(fd);
        return BU_CAMERA_ERROR;
    }
    int w = (int)f.fmt.pix.width, h = (int)f.fmt.pix.height;
    if (w < 16 || h < 16 || w > BU_CAMERA_MAX_SIDE || h > BU_CAMERA_MAX_SIDE) {
        bu_camera_say(error, error_length, "%s gives frames of %dx%d", path, w, h);
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
    if (bu_camera_xioctl(fd, VIDIOC_REQBUFS, &req) != 0 || req.count < 1) {
        bu_camera_say(error, error_length, "%s: cannot get buffers: %s", path, strerror(errno));
        goto fail;
    }
    for (unsigned i = 0; i < req.count && i < BUFFERS; i++) {
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = i;
        if (bu_camera_xioctl(fd, VIDIOC_QUERYBUF, &b) != 0) goto fail_errno;
        c->buffers[i].length = b.length;
        c->buffers[i].start = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
        c->count = i + 1;
        if (c->buffers[i].start == MAP_FAILED) goto fail_errno;
        if (bu_camera_xioctl(fd, VIDIOC_QBUF, &b) != 0) goto fail_errno;
    }
    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (bu_camera_xioctl(fd, VIDIOC_STREAMON, &type) != 0) goto fail_errno;
    fourcc_text(format, info->format);
    info->width = w;
    info->height = h;
    info->greyscale = greyscale_format(format);
    *camera = c;
    return BU_CAMERA_OK;
fail_errno:
    bu_camera_say(error, error_length, "%s: cannot map its buffers: %s", path, strerror(errno));
fail:
    unmap_all(c);
    free(c->grey);
    close(fd);
    free(c);
    return BU_CAMERA_ERROR;
}

bu_camera_status bu_camera_v4l2_capture(bu_camera *c, int timeout_ms, bu_frame *frame, char *error, size_t error_length) {
    if (c->queued >= 0) {
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = (unsigned)c->queued;
        c->queued = -1;
        if (bu_camera_xioctl(c->fd, VIDIOC_QBUF, &b) != 0) {
            bu_camera_say(error, error_length, "cannot give the buffer back: %s", strerror(errno));
            return errno == ENODEV ? BU_CAMERA_GONE : BU_CAMERA_ERROR;
        }
    }
    long long deadline = bu_camera_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        long long left = deadline - bu_camera_now_ms();
        if (left < 0) left = 0;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            bu_camera_say(error, error_length, "poll: %s", strerror(errno));
            return BU_CAMERA_ERROR;
        }
        if (r == 0) return BU_CAMERA_TIMEOUT;
        if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) {
            bu_camera_say(error, error_length, "the camera went away");
            return BU_CAMERA_GONE;
        }
        struct v4l2_buffer b;
        memset(&b, 0, sizeof b);
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        if (bu_camera_xioctl(c->fd, VIDIOC_DQBUF, &b) != 0) {
            if (errno == EAGAIN) continue;
            bu_camera_say(error, error_length, "cannot take a frame: %s", strerror(errno));
            return errno == ENODEV ? BU_CAMERA_GONE : BU_CAMERA_ERROR;
        }
        if (b.index >= c->count) {
            bu_camera_say(error, error_length, "the driver returned an unknown buffer");
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

void bu_camera_v4l2_close(bu_camera *c) {
    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    bu_camera_xioctl(c->fd, VIDIOC_STREAMOFF, &type);
    unmap_all(c);
    free(c->grey);
    close(c->fd);
}
