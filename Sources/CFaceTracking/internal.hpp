// Internal helpers shared by the shim's translation units. Never included by Swift.
#pragma once
#include "face_tracking.h"

#include <opencv2/core.hpp>

#include <atomic>
#include <cstdarg>
#include <memory>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace ft {
class Picture;
/// Converts `image`'s pending colour from its picture (picture.cpp).
void settle(const ft_image &image);
}  // namespace ft

/// An image: 8-bit BGR (CV_8UC3), or grey (CV_8UC1) for a frame's grey copy. A decoded video
/// frame keeps the decoder's picture and converts its colour only when its pixels are first
/// read (`view`, `edit`): its grey copy comes from the picture's luma plane, so a frame that is
/// only tracked is never converted to BGR. Every reader of the pixels goes through `view`,
/// every writer through `edit` (change in place) or `replace` (overwrite).
struct ft_image {
    ft_image() = default;
    ft_image(const ft_image &) = delete;
    ft_image &operator=(const ft_image &) = delete;

    /// The pixels (converted from the picture first when pending).
    const cv::Mat &view() const {
        if (pending.load(std::memory_order_acquire)) ft::settle(*this);
        return pixels;
    }
    /// The pixels, to be changed in place: they no longer show the picture.
    cv::Mat &edit() {
        view();
        picture.reset();
        halves_of = nullptr;
        return pixels;
    }
    /// The pixels, to be overwritten: the picture is forgotten without converting it.
    cv::Mat &replace() {
        picture.reset();
        pending.store(false, std::memory_order_release);
        halves_of = nullptr;
        return pixels;
    }
    /// Size without converting anything, pixels.
    cv::Size size() const;
    /// OpenCV type without converting anything (a picture's colour is CV_8UC3).
    int type() const { return pending.load(std::memory_order_acquire) ? CV_8UC3 : pixels.type(); }
    bool empty() const { return size().area() == 0; }

    /// The decoded video picture the pixels show (or will show once converted), if any.
    std::shared_ptr<ft::Picture> picture;
    /// True while `pixels` have not yet been converted from `picture`.
    mutable std::atomic<bool> pending{false};
    /// The pixels; stale while `pending`.
    mutable cv::Mat pixels;
    // A grey copy's reductions by 2, 4, 8, ... (area averages, made by `ft_image_to_gray`) and
    // the pixels they were made from: valid only while `pixels` still holds those pixels.
    std::vector<cv::Mat> halves;
    const uchar *halves_of = nullptr;
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


/// Makes `image.halves` from its grey `mat`: area averages by 2, 4, 8, ... (OpenCV's exact-2x
/// INTER_AREA path, about 0.07 ms for a 720p frame), down to a shorter side of 32 pixels. The
/// region, thumbnail and detection reductions then start from the smallest level that is still
/// large enough instead of averaging the whole-resolution pixels again.
/// `first_made`: `image.halves[0]` already holds the first level (made with the grey pixels,
/// `gray_of`); the others follow from it.
void build_halves(ft_image &image, bool first_made = false);

/// `image`'s halves when they were made from its current pixels; null otherwise.
const std::vector<cv::Mat> *valid_halves(const ft_image *image);

/// The smallest of `base` and its `halves` (reductions by 2, 4, ...; may be null) that still
/// holds `region` (pixels of `base`, already clipped to it) at `min_ratio` times `size`; `at`
/// receives the region in that image's pixels.
const cv::Mat *smallest_level(const cv::Mat &base, const std::vector<cv::Mat> *halves, const cv::Rect &region,
                              cv::Size size, int min_ratio, cv::Rect &at);

/// Area-averages `region` (pixels of `base`, clipped to it) down to `size` into `out`, starting
/// from the smallest of `halves` (`base` reduced by 2, 4, ...; may be null) that still holds the
/// region at `min_ratio` times `size` (bilinear from a level that holds it at less than twice
/// `size`). With `trim`, a region averaged from `base` itself is first trimmed (evenly, by less
/// than one output pixel) to a whole number of pixels per output pixel, OpenCV's fast integer
/// area path. An empty region leaves `out` empty.
void area_reduce(const cv::Mat &base, const std::vector<cv::Mat> *halves, cv::Rect region, cv::Size size, cv::Mat &out,
                 int min_ratio, bool trim);

/// Grey levels a row or column of padding may span at full resolution. Digital padding
/// (letterbox or pillarbox bars, a picture centred in a larger frame) is flat to a level or two
/// even after lossy coding; a real dark or plain region of a camera's picture keeps its noise.
constexpr int kPaddingRange = 2;

/// The picture area of the full-resolution grey frame `gray`: the frame less the flat bands
/// along its four edges (whole rows or columns spanning at most `kPaddingRange` grey levels),
/// at most half of each dimension. A frame without padding gives the whole frame.
cv::Rect picture_area(const cv::Mat &gray);

/// Whether `area` (found by `picture_area` on an earlier frame of the same size) is still the
/// picture area of `gray`, checked on the lines at its boundary only.
bool picture_area_holds(const cv::Mat &gray, const cv::Rect &area);

}  // namespace ft
