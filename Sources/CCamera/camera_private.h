// camera_private.h: what camera.c, camera_v4l2.c and camera_simulated.c share; not installed,
// not part of include/camera.h (Swift sees only that).
#pragma once
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

__attribute__((visibility("hidden"))) void bu_camera_say(char *error, size_t length, const char *format, ...) __attribute__((format(printf, 3, 4)));
__attribute__((visibility("hidden"))) long long bu_camera_now_ms(void);
__attribute__((visibility("hidden"))) int bu_camera_xioctl(int fd, unsigned long request, void *arg);
__attribute__((visibility("hidden"))) bu_camera_status bu_camera_v4l2_capture(bu_camera *c, int timeout_ms, bu_frame *frame, char *error, size_t error_length);
__attribute__((visibility("hidden"))) void bu_camera_v4l2_close(bu_camera *c);
__attribute__((visibility("hidden"))) bu_camera_status bu_camera_simulated_capture(bu_camera *c, int timeout_ms, bu_frame *frame, char *error, size_t error_length);
__attribute__((visibility("hidden"))) void bu_camera_simulated_close(bu_camera *c);
