/*
 * CCamera: the cameras biounlock-face reads (the only program that links it).
 *
 * - V4L2 (ioctl and mmap, no OpenCV): a greyscale format (GREY, Y16) is required, so that
 *   only an infrared camera is used, unless `allow_rgb` is set; then YUYV (its luma) and MJPEG
 *   (returned as JPEG bytes, decoded by the caller) are taken too.
 * - A simulated camera for demos and tests: it listens on a root-only control socket and takes
 *   `FRAME path` (show this PGM image from now on), `DARK` (black frames), `UNPLUG` (the camera
 *   goes away), `SLEEP ms` (no frame for that long: a camera that stalls), one per connection,
 *   closing the connection once the command is taken.
 *
 * Every wait is bounded by the caller's timeout; no signal is touched, no thread started.
 * A frame is only valid until the next capture or close.
 */
#ifndef BIOUNLOCK_CAMERA_H
#define BIOUNLOCK_CAMERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bu_camera bu_camera;

typedef enum {
    BU_CAMERA_OK = 0,
    BU_CAMERA_TIMEOUT = 1,   /* no frame within the timeout (a stalled camera) */
    BU_CAMERA_GONE = 2,      /* the device went away (unplugged) */
    BU_CAMERA_ERROR = 3,     /* anything else (message in `error`) */
    BU_CAMERA_REFUSED = 4,   /* open: no greyscale format, and RGB not allowed */
} bu_camera_status;

typedef enum {
    BU_FRAME_GREY = 0,   /* `pixels`: width x height bytes, `stride` a row */
    BU_FRAME_JPEG = 1,   /* `pixels`: `length` bytes of JPEG (MJPEG camera) */
    BU_FRAME_BAD = 2,    /* a frame that cannot be used: `problem` says why */
} bu_frame_kind;

typedef struct {
    bu_frame_kind kind;
    const uint8_t *pixels;
    size_t length;
    int width, height, stride;
    char problem[96];
} bu_frame;

typedef struct {
    char driver[32];
    char card[64];
    /** The V4L2 pixel format in use, as its four characters ("GREY", "Y16 ", "YUYV", "MJPG"), or "SIM". */
    char format[8];
    int width, height;
    /** 1 when the format is greyscale (an infrared camera), 0 for colour. */
    int greyscale;
} bu_camera_info;

/** Largest frame side the cameras deliver; larger is a BU_FRAME_BAD frame. */
#define BU_CAMERA_MAX_SIDE 4096
/** Largest image file the simulated camera reads for FRAME. */
#define BU_CAMERA_MAX_FILE (64u * 1024u * 1024u)

bu_camera_status bu_camera_open_v4l2(const char *path, int allow_rgb, bu_camera **camera, bu_camera_info *info,
                                     char *error, size_t error_length);

/** The simulated camera, listening on `socket_path` (made 0600 before it appears). */
bu_camera_status bu_camera_open_simulated(const char *socket_path, bu_camera **camera, bu_camera_info *info,
                                          char *error, size_t error_length);

/** Waits at most `timeout_ms` for the next frame. */
bu_camera_status bu_camera_capture(bu_camera *camera, int timeout_ms, bu_frame *frame, char *error, size_t error_length);

void bu_camera_close(bu_camera *camera);

/** The simulated camera's control protocol, parsed (for tests): 0 when `command` is valid. */
int bu_camera_parse_command(const uint8_t *command, size_t length);

#ifdef __cplusplus
}
#endif

#endif
