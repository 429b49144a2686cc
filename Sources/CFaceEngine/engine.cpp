// CFaceEngine: dlib behind a C interface (include/face_engine.h). The only code of biounlock
// that uses dlib; linked into biounlock-face alone.
//
// Choices:
// - dlib's HOG frontal face detector (no model file: built into the library), then the 5-point
//   shape predictor and dlib's ResNet (face_recognition_models' CC0 files): the pipeline
//   face_recognition and Howdy use, without Python;
// - every exception stops at this boundary and becomes BU_FACE_ERROR with its message;
// - sizes are checked before dlib sees an image: width and height within
//   [BU_FACE_MIN_SIDE, BU_FACE_MAX_SIDE], stride >= width, no arithmetic overflow.
#include "face_engine.h"

#include <dlib/dnn.h>
#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_loader/jpeg_loader.h>
#include <dlib/image_transforms.h>

#include <cstring>
#include <exception>
#include <new>
#include <string>

namespace {

using namespace dlib;

// dlib's face recognition network (dnn_face_recognition_ex.cpp), as the model file was trained.
template <template <int, template <typename> class, int, typename> class block, int N, template <typename> class BN, typename SUBNET>
using residual = add_prev1<block<N, BN, 1, tag1<SUBNET>>>;
template <template <int, template <typename> class, int, typename> class block, int N, template <typename> class BN, typename SUBNET>
using residual_down = add_prev2<avg_pool<2, 2, 2, 2, skip1<tag2<block<N, BN, 2, tag1<SUBNET>>>>>>;
template <int N, template <typename> class BN, int stride, typename SUBNET>
using block = BN<con<N, 3, 3, 1, 1, relu<BN<con<N, 3, 3, stride, stride, SUBNET>>>>>;
template <int N, typename SUBNET> using ares = relu<residual<block, N, affine, SUBNET>>;
template <int N, typename SUBNET> using ares_down = relu<residual_down<block, N, affine, SUBNET>>;
template <typename SUBNET> using alevel0 = ares_down<256, SUBNET>;
template <typename SUBNET> using alevel1 = ares<256, ares<256, ares_down<256, SUBNET>>>;
template <typename SUBNET> using alevel2 = ares<128, ares<128, ares_down<128, SUBNET>>>;
template <typename SUBNET> using alevel3 = ares<64, ares<64, ares<64, ares_down<64, SUBNET>>>>;
template <typename SUBNET> using alevel4 = ares<32, ares<32, ares<32, SUBNET>>>;
using anet_type = loss_metric<fc_no_bias<128, avg_pool_everything<
    alevel0<alevel1<alevel2<alevel3<alevel4<max_pool<3, 3, 2, 2, relu<affine<con<32, 7, 7, 2, 2,
    input_rgb_image_sized<150>>>>>>>>>>>>>;

void say(char *error, size_t length, const char *text) {
    if (error == nullptr || length == 0) return;
    std::strncpy(error, text, length - 1);
    error[length - 1] = '\0';
}

bool sizesOK(const uint8_t *pixels, int width, int height, int stride) {
    return pixels != nullptr && width >= BU_FACE_MIN_SIDE && height >= BU_FACE_MIN_SIDE && width <= BU_FACE_MAX_SIDE
        && height <= BU_FACE_MAX_SIDE && stride >= width && stride <= 4 * BU_FACE_MAX_SIDE;
}

}  // namespace

struct bu_face_engine {
    dlib::frontal_face_detector detector;
    dlib::shape_predictor landmarks;
    anet_type network;
};

extern "C" bu_face_engine *bu_face_engine_load(const char *landmarks_path, const char *resnet_path, char *error, size_t error_length) {
    if (landmarks_path == nullptr || resnet_path == nullptr) {
        say(error, error_length, "no model path");
        return nullptr;
    }
    bu_face_engine *engine = nullptr;
    try {
        engine = new bu_face_engine();
        engine->detector = dlib::get_frontal_face_detector();
        dlib::deserialize(landmarks_path) >> engine->landmarks;
        dlib::deserialize(resnet_path) >> engine->network;
        if (engine->landmarks.num_parts() != 5) {
            delete engine;
            say(error, error_length, "the landmark model is not the 5-point one");
            return nullptr;
        }
        return engine;
    } catch (const std::exception &e) {
        delete engine;
        say(error, error_length, e.what());
    } catch (...) {
        delete engine;
        say(error, error_length, "unknown error while loading the models");
    }
    return nullptr;
}

extern "C" void bu_face_engine_free(bu_face_engine *engine) { delete engine; }

extern "C" bu_face_status bu_face_describe(bu_face_engine *engine, const uint8_t *pixels, int width, int height, int stride,
                                           int upsample, int detect_only, float *descriptor, bu_face_found *found,
                                           char *error, size_t error_length) {
    if (engine == nullptr || !sizesOK(pixels, width, height, stride) || upsample < 0 || upsample > 2
        || (!detect_only && descriptor == nullptr)) {
        say(error, error_length, "image or arguments out of range");
        return BU_FACE_BAD_IMAGE;
    }
    try {
        dlib::array2d<unsigned char> grey(height, width);
        for (int y = 0; y < height; y++) std::memcpy(&grey[y][0], pixels + (size_t)y * (size_t)stride, (size_t)width);
        for (int i = 0; i < upsample; i++) dlib::pyramid_up(grey);
        const double scale = static_cast<double>(1 << upsample);
        std::vector<std::pair<double, dlib::rectangle>> detections;
        engine->detector(grey, detections, 0.0);
        if (found) std::memset(found, 0, sizeof *found);
        if (detections.empty()) return BU_FACE_NONE;
        size_t best = 0;
        for (size_t i = 1; i < detections.size(); i++)
            if (detections[i].second.area() > detections[best].second.area()) best = i;
        const dlib::rectangle box = detections[best].second;
        if (found) {
            found->faces = static_cast<int>(detections.size());
            found->left = static_cast<int>(box.left() / scale);
            found->top = static_cast<int>(box.top() / scale);
            found->width = static_cast<int>(box.width() / scale);
            found->height = static_cast<int>(box.height() / scale);
            found->score = detections[best].first;
        }
        if (detect_only) return BU_FACE_FOUND;
        const dlib::full_object_detection shape = engine->landmarks(grey, box);
        dlib::matrix<dlib::rgb_pixel> chip;
        dlib::array2d<dlib::rgb_pixel> colour;
        dlib::assign_image(colour, grey);
        dlib::extract_image_chip(colour, dlib::get_face_chip_details(shape, 150, 0.25), chip);
        const dlib::matrix<float, 0, 1> d = engine->network(chip);
        if (d.size() != BU_FACE_DESCRIPTOR_LENGTH) {
            say(error, error_length, "the network gave a descriptor of another size");
            return BU_FACE_ERROR;
        }
        for (long i = 0; i < d.size(); i++) descriptor[i] = d(i);
        return BU_FACE_FOUND;
    } catch (const std::bad_alloc &) {
        say(error, error_length, "out of memory");
    } catch (const std::exception &e) {
        say(error, error_length, e.what());
    } catch (...) {
        say(error, error_length, "unknown error");
    }
    return BU_FACE_ERROR;
}

extern "C" int bu_face_decode_jpeg(const uint8_t *data, size_t length, uint8_t *out, size_t capacity, int *width, int *height,
                                   char *error, size_t error_length) {
    if (data == nullptr || out == nullptr || width == nullptr || height == nullptr || length < 4) {
        say(error, error_length, "no JPEG data");
        return -1;
    }
    try {
        dlib::jpeg_loader loader(data, length);
        dlib::array2d<unsigned char> grey;
        loader.get_image(grey);
        const long w = grey.nc(), h = grey.nr();
        if (w < BU_FACE_MIN_SIDE || h < BU_FACE_MIN_SIDE || w > BU_FACE_MAX_SIDE || h > BU_FACE_MAX_SIDE
            || static_cast<size_t>(w) * static_cast<size_t>(h) > capacity) {
            say(error, error_length, "JPEG frame of an unsupported size");
            return -1;
        }
        for (long y = 0; y < h; y++) std::memcpy(out + (size_t)y * (size_t)w, &grey[y][0], (size_t)w);
        *width = static_cast<int>(w);
        *height = static_cast<int>(h);
        return 0;
    } catch (const std::exception &e) {
        say(error, error_length, e.what());
    } catch (...) {
        say(error, error_length, "unknown JPEG error");
    }
    return -1;
}
