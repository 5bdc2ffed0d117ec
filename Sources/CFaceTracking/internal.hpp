// Internal helpers shared by the shim's translation units. Never included by Swift.
#pragma once
#include "face_tracking.h"

#include <opencv2/core.hpp>

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

struct ft_image {
    cv::Mat mat;  // 8-bit BGR (CV_8UC3)
};

namespace ft {

/// Writes a printf-style message into `error` (when not null).
inline void set_error(ft_error *error, const char *format, ...) {
    if (!error) return;
    va_list args;
    va_start(args, format);
    std::vsnprintf(error->message, sizeof error->message, format, args);
    va_end(args);
}

/// Runs `body`, turning every C++ exception into a status and a message: exceptions never
/// cross into Swift.
template <class Body>
ft_status guarded(ft_error *error, const char *what, Body &&body) noexcept {
    try {
        return body();
    } catch (const cv::Exception &e) {
        set_error(error, "%s: OpenCV error in %s: %s", what, e.func.c_str(), e.err.c_str());
    } catch (const std::bad_alloc &) {
        set_error(error, "%s: out of memory", what);
    } catch (const std::exception &e) {
        set_error(error, "%s: %s", what, e.what());
    } catch (...) {
        set_error(error, "%s: unknown C++ exception", what);
    }
    return FT_ERR_INTERNAL;
}

/// Runs an OpenCV image decode; false (with a message) when OpenCV refused the image for its
/// size, which it checks from the header before decoding the pixels (ft_limits).
template <class Body>
bool decode_within_limits(ft_error *error, const char *what, Body &&body) {
    try {
        body();
        return true;
    } catch (const cv::Exception &e) {
        if (e.func.find("validateInputImageSize") == std::string::npos) throw;
        ft_limits limits = ft_limits_get();
        set_error(error, "%s: the image is larger than the limit (%lld megapixels, %d pixels a side); it was not decoded",
                  what, (long long)(limits.max_frame_pixels / 1000000), limits.max_frame_side);
        return false;
    }
}

/// Same as `guarded` for calls that return nothing (drawing): failures are ignored.
template <class Body>
void quietly(Body &&body) noexcept {
    try {
        body();
    } catch (...) {
    }
}

}  // namespace ft
