// CCamera: V4L2 cameras (camera_v4l2.c) and the simulated camera (camera_simulated.c) behind
// include/camera.h; this file has what both share and the calls that choose between them.
//
// A C target rather than Swift over BiounlockSystem: V4L2 is a set of ioctls on kernel structs
// (videodev2.h), which Swift cannot call (ioctl is variadic) without a shim per request; the
// whole camera is smaller in C. Linked into biounlock-face only, never into the module.
//
// Security choices:
// - the device is opened O_RDWR|O_NONBLOCK|O_CLOEXEC|O_NOCTTY and must be a character device;
// - every size the driver reports is checked (bytesused against the format's size, sides within
//   BU_CAMERA_MAX_SIDE) before a byte is read: a short or oversized buffer is a BAD frame;
// - the simulated camera's socket is bound under a private name, made 0600 and renamed into
//   place, so only root can drive it; a FRAME file is read with O_NOFOLLOW, at most
//   BU_CAMERA_MAX_FILE bytes, and parsed as binary PGM (P5) with every header field checked.
#define _GNU_SOURCE
#include "camera_private.h"

void bu_camera_say(char *error, size_t length, const char *format, ...) {
    if (error == NULL || length == 0) return;
    va_list args;
    va_start(args, format);
    vsnprintf(error, length, format, args);
    va_end(args);
}

long long bu_camera_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int bu_camera_xioctl(int fd, unsigned long request, void *arg) {
    int r;
    do r = ioctl(fd, request, arg);
    while (r == -1 && errno == EINTR);
    return r;
}

bu_camera_status bu_camera_capture(bu_camera *camera, int timeout_ms, bu_frame *frame, char *error, size_t error_length) {
    if (camera == NULL || frame == NULL) return BU_CAMERA_ERROR;
    return camera->simulated ? bu_camera_simulated_capture(camera, timeout_ms, frame, error, error_length)
                             : bu_camera_v4l2_capture(camera, timeout_ms, frame, error, error_length);
}

void bu_camera_close(bu_camera *camera) {
    if (camera == NULL) return;
    if (camera->simulated)
        bu_camera_simulated_close(camera);
    else
        bu_camera_v4l2_close(camera);
    free(camera);
}
