/*
 * CFaceEngine: a C interface over dlib's face detection, 5-point alignment and ResNet face
 * descriptor, for biounlock-face (the only program that links it: the PAM module never does).
 *
 * Every function catches every C++ exception at this boundary (dlib throws on a damaged model
 * file or an image it cannot take) and reports it as an error code with a message; nothing
 * here aborts the process on bad input. Images are 8-bit greyscale, row-major, `stride` bytes
 * a row.
 */
#ifndef BIOUNLOCK_FACE_ENGINE_H
#define BIOUNLOCK_FACE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Floats in one face descriptor (dlib_face_recognition_resnet_model_v1). */
#define BU_FACE_DESCRIPTOR_LENGTH 128
/** Largest image side the engine takes (pixels); larger frames are refused, never scaled. */
#define BU_FACE_MAX_SIDE 4096
/** Smallest image side the engine takes. */
#define BU_FACE_MIN_SIDE 16

typedef struct bu_face_engine bu_face_engine;

typedef enum {
    BU_FACE_FOUND = 0,        /* one face (the largest, if several), described */
    BU_FACE_NONE = 1,         /* no face in the image */
    BU_FACE_BAD_IMAGE = 2,    /* sizes out of range or inconsistent */
    BU_FACE_ERROR = 3,        /* dlib failed (message in `error`) */
} bu_face_status;

typedef struct {
    /** Faces the detector found (the largest one is described). */
    int faces;
    /** The described face's box in the image. */
    int left, top, width, height;
    /** The detector's score for it (higher: more face-like). */
    double score;
} bu_face_found;

/**
 * Loads the 5-point landmark model and the ResNet model (dlib's serialized .dat files). Returns
 * NULL with a message in `error` (at most `error_length` bytes, NUL-terminated) on failure.
 */
bu_face_engine *bu_face_engine_load(const char *landmarks_path, const char *resnet_path, char *error, size_t error_length);

void bu_face_engine_free(bu_face_engine *engine);

/**
 * Finds the faces in a greyscale image (dlib's HOG frontal detector, upsampled `upsample` times,
 * 0-2), aligns the largest one on its five landmarks (150x150 chip) and writes its 128-float
 * descriptor. `descriptor` and `found` may be NULL when `detect_only` is non-zero.
 */
bu_face_status bu_face_describe(bu_face_engine *engine, const uint8_t *pixels, int width, int height, int stride,
                                int upsample, int detect_only, float *descriptor, bu_face_found *found,
                                char *error, size_t error_length);

/**
 * Decodes a JPEG (an MJPEG camera frame) into 8-bit greyscale: at most `capacity` bytes into
 * `out`, sizes in `width`/`height`. Returns 0, or -1 with a message (corrupt data, too large).
 */
int bu_face_decode_jpeg(const uint8_t *data, size_t length, uint8_t *out, size_t capacity, int *width, int *height,
                        char *error, size_t error_length);

#ifdef __cplusplus
}
#endif

#endif
