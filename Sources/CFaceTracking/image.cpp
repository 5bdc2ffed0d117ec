// Images: decoding, raw pixels, encoding, scaling, quality measures (OpenCV imgcodecs/imgproc).
#include "container.hpp"
#include "internal.hpp"

#include <algorithm>
#include "picture.hpp"
#include "jpeg.hpp"
#include "png.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>
#include <sys/stat.h>

/// Largest encoded image file read into memory (a PNG of the largest allowed frame compresses
/// to far less).
static constexpr long long kMaxEncodedImageBytes = 256LL << 20;

namespace ft {

void build_halves(ft_image &image, bool first_made) {
    image.halves_of = nullptr;
    size_t count = 0;
    // The first level made beside the grey pixels is the one the loop would make (an image
    // whose shorter side is under 64 pixels has none).
    if (first_made && !image.halves.empty() && std::min(image.pixels.cols, image.pixels.rows) >= 64 &&
        image.pixels.type() == CV_8UC1)
        count = 1;
    while (true) {
        // (Indices, not pointers: growing `halves` moves its elements.)
        const cv::Mat &level = count == 0 ? image.pixels : image.halves[count - 1];
        if (level.type() != CV_8UC1 || std::min(level.cols, level.rows) < 64) break;
        // An even crop: exactly 2x, OpenCV's vectorised area path (the odd last row or column
        // of a level is left out of the next).
        cv::Mat even = level(cv::Rect(0, 0, level.cols & ~1, level.rows & ~1));
        if (image.halves.size() <= count) image.halves.emplace_back();
        cv::resize(even, image.halves[count], cv::Size(even.cols / 2, even.rows / 2), 0, 0, cv::INTER_AREA);
        ++count;
    }
    image.halves.resize(count);
    image.halves_of = image.pixels.data;
}

const std::vector<cv::Mat> *valid_halves(const ft_image *image) {
    if (!image || image->halves.empty() || image->pending || image->halves_of != image->pixels.data ||
        image->pixels.type() != CV_8UC1)
        return nullptr;
    const cv::Mat &first = image->halves.front();
    if (first.cols != image->pixels.cols / 2 || first.rows != image->pixels.rows / 2) return nullptr;
    return &image->halves;
}

const cv::Mat *smallest_level(const cv::Mat &base, const std::vector<cv::Mat> *halves, const cv::Rect &region,
                              cv::Size size, int min_ratio, cv::Rect &at) {
    const cv::Mat *source = &base;
    at = region;
    int need = std::max(1, min_ratio);
    for (size_t l = 0; halves && l < halves->size(); ++l) {
        int f = 2 << l;
        const cv::Mat &level = (*halves)[l];
        int x0 = region.x / f, y0 = region.y / f;
        int x1 = std::min(level.cols, (region.x + region.width) / f), y1 = std::min(level.rows, (region.y + region.height) / f);
        if (x1 - x0 < need * size.width || y1 - y0 < need * size.height) break;
        source = &level;
        at = cv::Rect(x0, y0, x1 - x0, y1 - y0);
    }
    return source;
}

void area_reduce(const cv::Mat &base, const std::vector<cv::Mat> *halves, cv::Rect region, cv::Size size, cv::Mat &out,
                 int min_ratio, bool trim) {
    region &= cv::Rect(0, 0, base.cols, base.rows);
    if (region.width < 1 || region.height < 1 || size.width < 1 || size.height < 1) {
        out.release();
        return;
    }
    // The smallest reduction that still holds the region at `min_ratio` times the result's
    // size: the area average from there is the region's own to within the levels' rounding,
    // and costs a fraction of averaging the whole-resolution pixels again.
    cv::Rect at;
    const cv::Mat *source = smallest_level(base, halves, region, size, min_ratio, at);
    if (trim && source == &base) {
        // At full resolution: a whole number of pixels per thumbnail pixel (the region trimmed
        // evenly by less than one thumbnail pixel), OpenCV's fast integer area path.
        if (at.width > size.width) {
            int w = at.width / size.width * size.width;
            at.x += (at.width - w) / 2;
            at.width = w;
        }
        if (at.height > size.height) {
            int h = at.height / size.height * size.height;
            at.y += (at.height - h) / 2;
            at.height = h;
        }
    }
    if (at.size() == size) {
        (*source)(at).copyTo(out);
    } else if (source != &base && (at.width < 2 * size.width || at.height < 2 * size.height)) {
        // Less than 2x from an area-averaged level: bilinear (OpenCV's general area path costs
        // about 40 instructions a pixel at such ratios, bilinear a few; the level has already
        // removed what a reduction by 2x or more would alias).
        cv::resize((*source)(at), out, size, 0, 0, cv::INTER_LINEAR);
    } else {
        cv::resize((*source)(at), out, size, 0, 0, cv::INTER_AREA);
    }
}

namespace {
bool flat_row(const cv::Mat &gray, int y, int x0, int x1) {
    const uchar *p = gray.ptr<uchar>(y);
    auto mm = std::minmax_element(p + x0, p + x1);
    return *mm.second - *mm.first <= kPaddingRange;
}
bool flat_col(const cv::Mat &gray, int x, int y0, int y1) {
    int lo = 255, hi = 0;
    for (int y = y0; y < y1; ++y) {
        int v = gray.at<uchar>(y, x);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        if (hi - lo > kPaddingRange) return false;
    }
    return true;
}
}  // namespace

cv::Rect picture_area(const cv::Mat &gray) {
    if (gray.empty() || gray.type() != CV_8UC1) return cv::Rect(0, 0, gray.cols, gray.rows);
    int top = 0, bottom = gray.rows, left = 0, right = gray.cols;
    while (top < gray.rows / 2 && flat_row(gray, top, 0, gray.cols)) ++top;
    while (bottom > gray.rows / 2 && flat_row(gray, bottom - 1, 0, gray.cols)) --bottom;
    while (left < gray.cols / 2 && flat_col(gray, left, top, bottom)) ++left;
    while (right > gray.cols / 2 && flat_col(gray, right - 1, top, bottom)) --right;
    return cv::Rect(left, top, right - left, bottom - top);
}

bool picture_area_holds(const cv::Mat &gray, const cv::Rect &area) {
    if (gray.empty() || gray.type() != CV_8UC1 || area.width <= 0 || area.height <= 0 ||
        (area & cv::Rect(0, 0, gray.cols, gray.rows)) != area)
        return false;
    const int x0 = area.x, x1 = area.x + area.width, y0 = area.y, y1 = area.y + area.height;
    // Each band's innermost line is still flat, and the picture's outermost lines still are not.
    if (y0 > 0 && !flat_row(gray, y0 - 1, 0, gray.cols)) return false;
    if (y1 < gray.rows && !flat_row(gray, y1, 0, gray.cols)) return false;
    if ((y0 < gray.rows / 2 && flat_row(gray, y0, 0, gray.cols)) || (y1 > gray.rows / 2 && flat_row(gray, y1 - 1, 0, gray.cols)))
        return false;
    if (x0 > 0 && !flat_col(gray, x0 - 1, y0, y1)) return false;
    if (x1 < gray.cols && !flat_col(gray, x1, y0, y1)) return false;
    if ((x0 < gray.cols / 2 && flat_col(gray, x0, y0, y1)) || (x1 > gray.cols / 2 && flat_col(gray, x1 - 1, y0, y1)))
        return false;
    return true;
}

}  // namespace ft

extern "C" {

ft_image *ft_image_new(void) {
    try {
        return new ft_image();
    } catch (...) {
        return nullptr;
    }
}

void ft_image_free(ft_image *image) { delete image; }

int ft_image_width(const ft_image *image) { return image ? image->size().width : 0; }
int ft_image_height(const ft_image *image) { return image ? image->size().height : 0; }
int ft_image_channels(const ft_image *image) { return image && !image->empty() ? CV_MAT_CN(image->type()) : 0; }

const uint8_t *ft_image_bytes(const ft_image *image, size_t *stride) {
    if (!image || image->empty()) return nullptr;
    try {
        const cv::Mat &pixels = image->view();
        if (stride) *stride = pixels.step[0];
        return pixels.data;
    } catch (...) {
        return nullptr;
    }
}

ft_status ft_image_i420(const ft_image *image, uint8_t *out, size_t capacity, ft_error *error) {
    if (!image || !out) return ft::set_error(error, "i420: null argument"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "i420", [&] {
        std::shared_ptr<ft::Picture> picture = image->picture;
        if (!picture || !picture->copy_i420(out, capacity))
            return ft::set_error(error, "i420: the image does not hold an upright limited-range 4:2:0 picture"),
                   FT_ERR_UNSUPPORTED;
        return FT_OK;
    });
}

ft_status ft_image_copy(const ft_image *source, ft_image *destination, ft_error *error) {
    if (!source || !destination) return ft::set_error(error, "copy: null image"), FT_ERR_ARGUMENT;
    if (source == destination) return FT_OK;
    return ft::guarded(error, "copy", [&] {
        // A decoded frame's copy shows the same picture: its colour is converted only if read,
        // and its grey copy is the same luma.
        std::shared_ptr<ft::Picture> picture = source->picture;
        bool pending = source->pending.load(std::memory_order_acquire);
        cv::Mat &pixels = destination->replace();
        if (!pending) source->pixels.copyTo(pixels);
        destination->picture = std::move(picture);
        destination->pending.store(pending && destination->picture, std::memory_order_release);
        return FT_OK;
    });
}

ft_status ft_image_fill(ft_image *image, int width, int height, int blue, int green, int red, ft_error *error) {
    if (!image || width <= 0 || height <= 0 || width > 16384 || height > 16384)
        return ft::set_error(error, "fill: bad size %dx%d", width, height), FT_ERR_ARGUMENT;
    return ft::guarded(error, "fill", [&] {
        cv::Mat &pixels = image->replace();
        pixels.create(height, width, CV_8UC3);
        pixels.setTo(cv::Scalar(blue, green, red));
        return FT_OK;
    });
}

int ft_file_is_image(const char *path) {
    if (!path) return 0;
    try {
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return 0;
        return cv::haveImageReader(path) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

/// Decodes JPEG or PNG bytes after checking the size their header declares against ft_limits.
/// Other formats are refused: the engine takes JPEG and PNG stills (the spec's encoded frames).
static ft_status decode_encoded(const uint8_t *bytes, size_t count, const char *what, cv::Mat &out, ft_error *error) {
    ft::configure_libraries();
    if (ft::is_png(bytes, count)) return ft::decode_png(bytes, count, what, out, error);
    if (!ft::is_jpeg(bytes, count)) {
        ft::set_error(error, "%s: not a JPEG or PNG image (stills must be JPEG or PNG)", what);
        return FT_ERR_UNSUPPORTED;
    }
    int width = 0, height = 0;
    if (!ft::jpeg_size(bytes, count, &width, &height)) {
        ft::set_error(error, "%s: not a JPEG that can be decoded (unreadable header)", what);
        return FT_ERR_DECODE;
    }
    ft_limits limits = ft_limits_get();
    if (width > limits.max_frame_side || height > limits.max_frame_side ||
        (int64_t)width * height > limits.max_frame_pixels) {
        ft::set_error(error, "%s: the image is %dx%d pixels, larger than the limit (%lld megapixels, %d pixels a side); "
                             "it was not decoded", what, width, height, (long long)(limits.max_frame_pixels / 1000000),
                      limits.max_frame_side);
        return FT_ERR_LIMIT;
    }
    return ft::guarded(error, what, [&] {
        cv::Mat buffer(1, (int)count, CV_8UC1, const_cast<uint8_t *>(bytes));
        // cv::imdecode applies the EXIF orientation, as cv::imread does.
        cv::Mat decoded = cv::imdecode(buffer, cv::IMREAD_COLOR);
        if (decoded.empty()) {
            ft::set_error(error, "%s: not a JPEG that can be decoded (corrupt or truncated)", what);
            return FT_ERR_DECODE;
        }
        out = decoded;
        return FT_OK;
    });
}

ft_status ft_image_decode_file(const char *path, ft_image *out, ft_error *error) {
    if (!path || !out) return ft::set_error(error, "decode: null argument"), FT_ERR_ARGUMENT;
    struct stat st;
    if (stat(path, &st) != 0)
        return ft::set_error(error, "%s: %s", path, std::strerror(errno)), FT_ERR_NOT_FOUND;
    if (!S_ISREG(st.st_mode)) return ft::set_error(error, "%s: not a regular file", path), FT_ERR_NOT_FOUND;
    if (st.st_size == 0) return ft::set_error(error, "%s: empty file", path), FT_ERR_UNSUPPORTED;
    if (st.st_size > kMaxEncodedImageBytes)
        return ft::set_error(error, "%s: %lld bytes, larger than the limit for an image file (%lld)", path,
                             (long long)st.st_size, (long long)kMaxEncodedImageBytes), FT_ERR_LIMIT;
    return ft::guarded(error, path, [&] {
        std::vector<uint8_t> bytes((size_t)st.st_size);
        std::ifstream in(path, std::ios::binary);
        if (!in.read(reinterpret_cast<char *>(bytes.data()), (std::streamsize)bytes.size()))
            return ft::set_error(error, "%s: could not read the file", path), FT_ERR_NOT_FOUND;
        return decode_encoded(bytes.data(), bytes.size(), path, out->replace(), error);
    });
}

ft_status ft_image_encoded_size(const uint8_t *bytes, size_t count, int *width, int *height, ft_error *error) {
    if (!bytes || !width || !height || count == 0) return ft::set_error(error, "size: no bytes"), FT_ERR_ARGUMENT;
    if (ft::is_png(bytes, count)) {
        // The IHDR chunk comes first: width and height, big-endian, at bytes 16 and 20.
        if (count < 24 || std::memcmp(bytes + 12, "IHDR", 4) != 0)
            return ft::set_error(error, "image: a PNG without its IHDR header"), FT_ERR_DECODE;
        auto be32 = [&](size_t at) { return ((uint32_t)bytes[at] << 24) | ((uint32_t)bytes[at + 1] << 16) | ((uint32_t)bytes[at + 2] << 8) | bytes[at + 3]; };
        uint32_t w = be32(16), h = be32(20);
        if (w == 0 || h == 0 || w > 0x7FFFFFFF || h > 0x7FFFFFFF)
            return ft::set_error(error, "image: a PNG of %ux%u pixels", w, h), FT_ERR_DECODE;
        *width = (int)w;
        *height = (int)h;
        return FT_OK;
    }
    if (!ft::is_jpeg(bytes, count))
        return ft::set_error(error, "image: not a JPEG or PNG image (stills must be JPEG or PNG)"), FT_ERR_UNSUPPORTED;
    if (!ft::jpeg_size(bytes, count, width, height))
        return ft::set_error(error, "image: not a JPEG that can be decoded (unreadable header)"), FT_ERR_DECODE;
    return FT_OK;
}

ft_status ft_image_decode_bytes(const uint8_t *bytes, size_t count, ft_image *out, ft_error *error) {
    if (!bytes || !out || count == 0) return ft::set_error(error, "decode: no bytes"), FT_ERR_ARGUMENT;
    if (count > (size_t)kMaxEncodedImageBytes)
        return ft::set_error(error, "decode: %zu bytes, larger than the limit for an image (%lld)", count,
                             (long long)kMaxEncodedImageBytes), FT_ERR_LIMIT;
    return decode_encoded(bytes, count, "image", out->replace(), error);
}

ft_status ft_image_from_pixels(const uint8_t *pixels, int width, int height, int stride,
                               ft_pixel_format format, ft_image *out, ft_error *error) {
    int channels = 0;
    bool planar = false;
    switch (format) {
        case FT_PIXELS_BGR: case FT_PIXELS_RGB: channels = 3; break;
        case FT_PIXELS_GRAY: channels = 1; break;
        case FT_PIXELS_BGRA: case FT_PIXELS_RGBA: channels = 4; break;
        case FT_PIXELS_NV12: case FT_PIXELS_I420: channels = 1, planar = true; break;
        default: return ft::set_error(error, "pixels: unknown format %d", (int)format), FT_ERR_ARGUMENT;
    }
    if (!pixels || !out || width <= 0 || height <= 0)
        return ft::set_error(error, "pixels: bad size %dx%d", width, height), FT_ERR_ARGUMENT;
    ft_limits limits = ft_limits_get();
    if (width > limits.max_frame_side || height > limits.max_frame_side ||
        (int64_t)width * height > limits.max_frame_pixels)
        return ft::set_error(error, "pixels: %dx%d exceeds the limit (%lld megapixels, %d pixels a side)", width, height,
                             (long long)(limits.max_frame_pixels / 1000000), limits.max_frame_side), FT_ERR_LIMIT;
    if (stride < width * channels)
        return ft::set_error(error, "pixels: stride %d is less than %d bytes per row", stride, width * channels), FT_ERR_ARGUMENT;
    if (planar && (width % 2 != 0 || height % 2 != 0))
        return ft::set_error(error, "pixels: YUV 4:2:0 frames need an even width and height, not %dx%d", width, height),
               FT_ERR_ARGUMENT;
    if (format == FT_PIXELS_I420 && stride != width)
        return ft::set_error(error, "pixels: I420 planes must be tightly packed (stride %d, width %d)", stride, width),
               FT_ERR_ARGUMENT;
    return ft::guarded(error, "pixels", [&] {
        cv::Mat &target = out->replace();
        if (planar) {
            // Kept as a picture, as a decoded video frame is: the grey copy is the luma plane and
            // the colour is converted only when read (limited range, BT.601, as a camera's
            // I420/NV12 and OpenCV's YUV conversions take them).
            out->picture = ft::picture_from_planes(pixels, width, height, stride, format == FT_PIXELS_NV12);
            out->pending.store(true, std::memory_order_release);
            return FT_OK;
        }
        cv::Mat view(height, width, CV_8UC(channels), const_cast<uint8_t *>(pixels), (size_t)stride);
        switch (format) {
            case FT_PIXELS_BGR: view.copyTo(target); break;
            case FT_PIXELS_RGB: cv::cvtColor(view, target, cv::COLOR_RGB2BGR); break;
            case FT_PIXELS_GRAY: cv::cvtColor(view, target, cv::COLOR_GRAY2BGR); break;
            case FT_PIXELS_BGRA: cv::cvtColor(view, target, cv::COLOR_BGRA2BGR); break;
            case FT_PIXELS_RGBA: cv::cvtColor(view, target, cv::COLOR_RGBA2BGR); break;
            default: break;
        }
        return FT_OK;
    });
}

ft_status ft_image_rotate(ft_image *image, int clockwise_degrees, ft_error *error) {
    if (!image || image->empty()) return ft::set_error(error, "rotate: empty image"), FT_ERR_ARGUMENT;
    int degrees = ((clockwise_degrees % 360) + 360) % 360;
    if (degrees % 90 != 0) return ft::set_error(error, "rotate: %d is not a multiple of 90 degrees", clockwise_degrees), FT_ERR_ARGUMENT;
    if (degrees == 0) return FT_OK;
    return ft::guarded(error, "rotate", [&] {
        cv::Mat turned;
        cv::Mat &pixels = image->edit();
        cv::rotate(pixels, turned, degrees == 90 ? cv::ROTATE_90_CLOCKWISE
                                       : degrees == 180 ? cv::ROTATE_180 : cv::ROTATE_90_COUNTERCLOCKWISE);
        pixels = turned;
        return FT_OK;
    });
}

void ft_buffer_free(ft_buffer *buffer) {
    if (!buffer) return;
    std::free(buffer->bytes);
    buffer->bytes = nullptr;
    buffer->count = 0;
}

static ft_status encode(const ft_image *image, const char *ext, const std::vector<int> &params, ft_buffer *out,
                        ft_error *error) {
    if (!image || !out || image->empty()) return ft::set_error(error, "encode: empty image"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "encode", [&] {
        std::vector<uchar> bytes;
        if (!cv::imencode(ext, image->view(), bytes, params)) {
            ft::set_error(error, "encode: OpenCV could not encode %s", ext);
            return FT_ERR_ENCODE;
        }
        out->bytes = static_cast<uint8_t *>(std::malloc(bytes.size()));
        if (!out->bytes) throw std::bad_alloc();
        std::memcpy(out->bytes, bytes.data(), bytes.size());
        out->count = bytes.size();
        return FT_OK;
    });
}

ft_status ft_image_encode_jpeg(const ft_image *image, int quality, ft_buffer *out, ft_error *error) {
    if (quality < 0 || quality > 100) return ft::set_error(error, "encode: JPEG quality %d not in 0...100", quality), FT_ERR_ARGUMENT;
    return encode(image, ".jpg", {cv::IMWRITE_JPEG_QUALITY, quality}, out, error);
}

ft_status ft_image_encode_png(const ft_image *image, ft_buffer *out, ft_error *error) {
    return encode(image, ".png", {cv::IMWRITE_PNG_COMPRESSION, 6}, out, error);
}

ft_status ft_image_flip_horizontal(ft_image *image, ft_error *error) {
    if (image) image->halves_of = nullptr;  // the pixels change
    if (!image || image->empty()) return ft::set_error(error, "flip: empty image"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "flip", [&] {
        cv::Mat &pixels = image->edit();
        cv::flip(pixels, pixels, 1);
        return FT_OK;
    });
}

ft_status ft_image_scale(ft_image *image, double factor, ft_error *error) {
    if (image) image->halves_of = nullptr;  // the pixels change
    if (!image || image->empty() || !(factor > 0.01 && factor < 16))
        return ft::set_error(error, "scale: bad factor %g", factor), FT_ERR_ARGUMENT;
    return ft::guarded(error, "scale", [&] {
        cv::Mat scaled;
        cv::Mat &pixels = image->edit();
        cv::resize(pixels, scaled, cv::Size(), factor, factor, factor < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
        pixels = scaled;
        return FT_OK;
    });
}

ft_status ft_image_to_gray(const ft_image *source, ft_image *out, ft_error *error) {
    if (!source || !out || source->empty()) return ft::set_error(error, "gray: empty image"), FT_ERR_ARGUMENT;
    if (source == out) return ft::set_error(error, "gray: the source and the destination are one image"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "gray", [&] {
        // A decoded frame's grey copy is its luma plane (no colour conversion).
        cv::Mat &pixels = out->replace();
        if (out->halves.empty()) out->halves.emplace_back();
        bool first_made = ft::gray_of(*source, pixels, &out->halves[0]);
        ft::build_halves(*out, first_made);
        return FT_OK;
    });
}

ft_status ft_image_quality(const ft_image *image, double x, double y, double w, double h, double *brightness,
                           double *sharpness, ft_error *error) {
    if (!image || image->empty()) return ft::set_error(error, "quality: empty image"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "quality", [&] {
        const cv::Mat &pixels = image->view();
        cv::Rect full(0, 0, pixels.cols, pixels.rows);
        cv::Rect region = w > 0 && h > 0 ? cv::Rect((int)x, (int)y, (int)w, (int)h) & full : full;
        if (region.area() <= 0) region = full;
        cv::Mat gray, laplacian;
        if (pixels.channels() == 1) pixels(region).copyTo(gray);
        else cv::cvtColor(pixels(region), gray, cv::COLOR_BGR2GRAY);
        cv::Laplacian(gray, laplacian, CV_64F);
        cv::Scalar mean, deviation;
        cv::meanStdDev(laplacian, mean, deviation);
        if (brightness) *brightness = cv::mean(gray)[0];
        if (sharpness) *sharpness = deviation[0] * deviation[0];
        return FT_OK;
    });
}

ft_status ft_image_thumbnail(const ft_image *source, double x, double y, double w, double h, int width, int height,
                             ft_image *out, ft_error *error) {
    if (!source || !out || source->empty() || width < 1 || height < 1 || width > 1024 || height > 1024)
        return ft::set_error(error, "thumbnail: bad arguments"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "thumbnail", [&] {
        const cv::Mat &pixels = source->view();
        cv::Rect whole(0, 0, pixels.cols, pixels.rows);
        cv::Rect region = whole;
        if (w > 0 && h > 0) {
            if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(w) || !std::isfinite(h))
                return ft::set_error(error, "thumbnail: the region is not finite"), FT_ERR_ARGUMENT;
            double x0 = std::max(0.0, std::floor(x)), y0 = std::max(0.0, std::floor(y));
            double x1 = std::min((double)whole.width, std::ceil(x + w)), y1 = std::min((double)whole.height, std::ceil(y + h));
            if (x1 - x0 < 1 || y1 - y0 < 1) return ft::set_error(error, "thumbnail: the region is outside the image"), FT_ERR_ARGUMENT;
            region = cv::Rect((int)x0, (int)y0, (int)(x1 - x0), (int)(y1 - y0));
        }
        // Area-averaged (from the grey copy's reductions when `source` is a frame's grey copy),
        // the region trimmed to a whole number of pixels per thumbnail pixel: OpenCV's area
        // resize then takes its fast integer path (about 10x cheaper than the general one).
        thread_local cv::Mat small;
        ft::area_reduce(pixels, ft::valid_halves(source), region, cv::Size(width, height), small, 2, true);
        cv::Mat &target = out->replace();
        if (small.channels() == 3) cv::cvtColor(small, target, cv::COLOR_BGR2GRAY);
        else small.copyTo(target);
        return FT_OK;
    });
}

}  // extern "C"
