// Decoded video pictures: the upright grey frame straight from the luma plane, and the colour
// converted to BGR (libswscale) only when an image's pixels are read.
#include "picture.hpp"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ft {

cv::Size Upright::square(cv::Size stored) const {
    double sa = sample_aspect;
    if (sa == 1) return stored;
    // Square pixels: the wider side of a pixel is kept, the other stretched to match.
    return cv::Size(sa > 1 ? (int)std::lround(stored.width * sa) : stored.width,
                    sa < 1 ? (int)std::lround(stored.height / sa) : stored.height);
}

cv::Size Upright::size(cv::Size stored) const {
    cv::Size s = square(stored);
    return orientation.swaps_sides() ? cv::Size(s.height, s.width) : s;
}

void Upright::turn(const cv::Mat &in, cv::Mat &out) const {
    // As FFmpeg's player turns a picture for the stream's display matrix.
    const Orientation &o = orientation;
    using O = Orientation;
    switch (o.op) {
        case O::None: in.copyTo(out); return;
        case O::RotateClockwise: cv::rotate(in, out, cv::ROTATE_90_CLOCKWISE); return;
        case O::RotateCounterClockwise: cv::rotate(in, out, cv::ROTATE_90_COUNTERCLOCKWISE); return;
        case O::Rotate180: cv::rotate(in, out, cv::ROTATE_180); return;
        case O::Transpose: cv::transpose(in, out); return;
        case O::AntiTranspose: {
            cv::Mat t;
            cv::transpose(in, t);
            cv::flip(t, out, -1);
            return;
        }
        case O::FlipHorizontal: cv::flip(in, out, 1); return;
        case O::FlipVertical: cv::flip(in, out, 0); return;
        case O::Arbitrary: {
            // FFmpeg's rotate filter: about the centre, same frame size, corners filled black.
            // Its angle is counter-clockwise for positive values; theta is clockwise.
            cv::Point2f centre(in.cols / 2.0f, in.rows / 2.0f);
            cv::Mat m = cv::getRotationMatrix2D(centre, -o.theta_degrees, 1.0);
            cv::warpAffine(in, out, m, in.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar());
            return;
        }
    }
    in.copyTo(out);
}

ColourConverter::~ColourConverter() {
    sws_freeContext(context_);
    sws_freeContext(grey_context_);
}

void ColourConverter::convert(const AVFrame *frame, cv::Size size, cv::Mat &bgr) {
    std::lock_guard<std::mutex> hold(lock_);
    convert(frame, size, AV_PIX_FMT_BGR24, context_, bgr);
}

void ColourConverter::grey(const AVFrame *frame, cv::Size size, cv::Mat &grey) {
    std::lock_guard<std::mutex> hold(lock_);
    convert(frame, size, AV_PIX_FMT_GRAY8, grey_context_, grey);
}

/// Bytes the conversion may write past the end of its output (libswscale's widest vector
/// blocks are 64 bytes).
static constexpr long kConversionPadding = 256;

void ColourConverter::convert(const AVFrame *frame, cv::Size size, AVPixelFormat to, SwsContext *&context,
                              cv::Mat &out) {
    auto format = (AVPixelFormat)frame->format;
    // Bicubic, ffmpeg's default for its scale filter and for the conversions it inserts (and
    // OpenCV's FFmpeg reader's): for the chroma of subsampled formats, and for the picture when
    // non-square pixels are stretched, in the same pass as ffmpeg's scale filter does it.
    context = sws_getCachedContext(context, frame->width, frame->height, format, size.width, size.height, to,
                                   SWS_BICUBIC, nullptr, nullptr, nullptr);
    if (!context) throw std::runtime_error(std::string("no conversion from pixel format ") + av_get_pix_fmt_name(format));
    // The picture's own colour matrix and range, as ffmpeg's scale filter reads them ("yuvj"
    // formats are full range by their name; swscale knows those itself). To grey only the range
    // matters: swscale's defaults (limited unless "yuvj", grey out full) are ffmpeg's, and only
    // a picture that says it is full range needs telling.
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(format);
    bool yuv = desc && !(desc->flags & AV_PIX_FMT_FLAG_RGB) && desc->nb_components >= 3;
    bool needed = to != AV_PIX_FMT_GRAY8 || frame->color_range == AVCOL_RANGE_JPEG;
    if (yuv && needed && std::strncmp(desc->name, "yuvj", 4) != 0) {
        int space = frame->colorspace >= 0 && frame->colorspace <= 10 ? (int)frame->colorspace : SWS_CS_DEFAULT;
        int full = frame->color_range == AVCOL_RANGE_JPEG ? 1 : 0;
        sws_setColorspaceDetails(context, sws_getCoefficients(space), full, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                                 1 << 16, 1 << 16);
    }
    // libswscale's vector code writes whole blocks of pixels: up to a block past the end of a
    // row, which the next row then overwrites, and past the last row into the padding.
    int type = to == AV_PIX_FMT_GRAY8 ? CV_8UC1 : CV_8UC3;
    if (out.rows != size.height || out.cols != size.width || out.type() != type || !out.isContinuous() ||
        out.datalimit - out.dataend < kConversionPadding) {
        cv::Mat storage(size.height + 1 + kConversionPadding / (size.width * CV_ELEM_SIZE(type)), size.width, type);
        out = storage.rowRange(0, size.height);
    }
    uint8_t *planes[4] = {out.data, nullptr, nullptr, nullptr};
    int strides[4] = {(int)out.step[0], 0, 0, 0};
    sws_scale(context, frame->data, frame->linesize, 0, frame->height, planes, strides);
}

Picture::Picture(AVFrame *frame, Upright upright, std::shared_ptr<ColourConverter> converter)
    : frame_(frame), upright_(upright), converter_(std::move(converter)) {
    size_ = upright_.size(cv::Size(frame->width, frame->height));
    auto format = (AVPixelFormat)frame->format;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(format);
    // The luma is plane 0 at one byte a pixel: planar and semi-planar 8-bit YUV, and grey.
    has_luma_ = desc && !(desc->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL |
                                         AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_BITSTREAM)) &&
                desc->comp[0].plane == 0 && desc->comp[0].step == 1 && desc->comp[0].depth == 8 &&
                desc->comp[0].shift == 0 && desc->comp[0].offset == 0 &&
                (desc->nb_components == 1 || desc->nb_components == 2 || (desc->flags & AV_PIX_FMT_FLAG_PLANAR)) &&
                frame->data[0] && frame->linesize[0] >= frame->width;
    // Full range: "yuvj" formats by their name, a picture that says so, and grey pictures that
    // do not say they are limited.
    bool grey = desc && desc->nb_components <= 2;
    full_range_ = frame->color_range == AVCOL_RANGE_JPEG || (desc && std::strncmp(desc->name, "yuvj", 4) == 0) ||
                  (grey && frame->color_range != AVCOL_RANGE_MPEG);
}

Picture::~Picture() { av_frame_free(&frame_); }

/// The integer loops below are built twice, for baseline x86-64 and for AVX2 (32 pixels a step
/// instead of 16), and the copy the CPU can run is chosen when the program loads: integer
/// arithmetic, so both give the same bytes.
#if defined(__x86_64__) && defined(__clang__)
#define FT_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define FT_CLONES_AVX2
#endif

/// Limited-range luma (16...235) to grey levels 0...255: y' = (y - 16) * 255 / 219, rounded and
/// clipped, as ffmpeg's conversion to gray gives it. In fixed point, (y * 4770 - 74348) >> 12
/// equals the rounded value for all 256 inputs (the tests compare every value with ffmpeg's);
/// the loop is plain integer arithmetic the compiler vectorises (0.9 instructions a pixel by
/// callgrind, 0.8 M a 720p frame, against 1.3 for cv::Mat::convertTo and 6 for cv::LUT).
FT_CLONES_AVX2
static void expand_limited_range(const cv::Mat &luma, cv::Mat &grey) {
    grey.create(luma.size(), CV_8UC1);
    const int cols = luma.cols;
    for (int r = 0; r < luma.rows; ++r) {
        const uint8_t *__restrict in = luma.ptr<uint8_t>(r);
        uint8_t *__restrict out = grey.ptr<uint8_t>(r);
#pragma clang loop vectorize(enable)
        for (int x = 0; x < cols; ++x) {
            int v = ((int)in[x] * 4770 - 74348) >> 12;
            v = v < 0 ? 0 : v;
            out[x] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

/// `expand_limited_range` and, in the same pass over each pair of rows, the grey frame reduced
/// by 2 as OpenCV's area resize of its even crop gives it ((a + b + c + d + 2) >> 2, the odd last
/// row or column left out): the pair of rows is still in the core's L1 cache when it is
/// averaged, where `cv::resize` afterwards read the whole 0.9 MB frame back (a 720p frame).
FT_CLONES_AVX2
static void expand_limited_range_and_halve(const cv::Mat &luma, cv::Mat &grey, cv::Mat &half) {
    grey.create(luma.size(), CV_8UC1);
    half.create(luma.rows / 2, luma.cols / 2, CV_8UC1);
    const int cols = luma.cols, half_cols = cols / 2;
    auto expand_row = [cols](const uint8_t *__restrict in, uint8_t *__restrict out) {
#pragma clang loop vectorize(enable)
        for (int x = 0; x < cols; ++x) {
            int v = ((int)in[x] * 4770 - 74348) >> 12;
            v = v < 0 ? 0 : v;
            out[x] = (uint8_t)(v > 255 ? 255 : v);
        }
    };
    for (int r = 0; r < luma.rows; ++r) {
        expand_row(luma.ptr<uint8_t>(r), grey.ptr<uint8_t>(r));
        if (r % 2 == 0 || r / 2 >= half.rows) continue;
        const uint8_t *__restrict a = grey.ptr<uint8_t>(r - 1);
        const uint8_t *__restrict b = grey.ptr<uint8_t>(r);
        uint8_t *__restrict out = half.ptr<uint8_t>(r / 2);
#pragma clang loop vectorize(enable)
        for (int x = 0; x < half_cols; ++x)
            out[x] = (uint8_t)((a[2 * x] + a[2 * x + 1] + b[2 * x] + b[2 * x + 1] + 2) >> 2);
    }
}

bool Picture::luma(cv::Mat &grey, cv::Mat *half) const {
    bool turned = upright_.orientation.op != Orientation::None;

    if (half && !turned && has_luma_ && upright_.sample_aspect == 1 && !full_range_) {
        cv::Mat plane(frame_->height, frame_->width, CV_8UC1, frame_->data[0], (size_t)frame_->linesize[0]);
        expand_limited_range_and_halve(plane, grey, *half);
        return true;
    }
    luma(grey);
    return false;
}

void Picture::luma(cv::Mat &grey) const {
    bool turned = upright_.orientation.op != Orientation::None;
    thread_local cv::Mat levels;
    cv::Mat &target = turned ? levels : grey;
    if (has_luma_ && upright_.sample_aspect == 1) {
        cv::Mat plane(frame_->height, frame_->width, CV_8UC1, frame_->data[0], (size_t)frame_->linesize[0]);
        if (full_range_) plane.copyTo(target);
        else expand_limited_range(plane, target);
    } else {
        // Non-square pixels are stretched as ffmpeg's scale filter stretches them, in the
        // conversion to grey.
        converter_->grey(frame_, upright_.square(cv::Size(frame_->width, frame_->height)), target);
    }
    if (turned) upright_.turn(levels, grey);
}

bool Picture::copy_i420(uint8_t *out, size_t capacity) const {
    auto format = (AVPixelFormat)frame_->format;
    int w = frame_->width, h = frame_->height;
    if ((format != AV_PIX_FMT_YUV420P && format != AV_PIX_FMT_NV12) || full_range_ || w % 2 || h % 2 ||
        upright_.sample_aspect != 1 || upright_.orientation.op != Orientation::None || capacity < (size_t)w * h * 3 / 2)
        return false;
    for (int y = 0; y < h; ++y) std::memcpy(out + (size_t)y * w, frame_->data[0] + (size_t)y * frame_->linesize[0], w);
    uint8_t *u = out + (size_t)w * h, *v = u + (size_t)(w / 2) * (h / 2);
    for (int y = 0; y < h / 2; ++y) {
        if (format == AV_PIX_FMT_YUV420P) {
            std::memcpy(u + (size_t)y * (w / 2), frame_->data[1] + (size_t)y * frame_->linesize[1], w / 2);
            std::memcpy(v + (size_t)y * (w / 2), frame_->data[2] + (size_t)y * frame_->linesize[2], w / 2);
        } else {
            const uint8_t *uv = frame_->data[1] + (size_t)y * frame_->linesize[1];
            for (int x = 0; x < w / 2; ++x) {
                u[(size_t)y * (w / 2) + x] = uv[2 * x];
                v[(size_t)y * (w / 2) + x] = uv[2 * x + 1];
            }
        }
    }
    return true;
}

void Picture::colour(cv::Mat &bgr) const {
    cv::Size square = upright_.square(cv::Size(frame_->width, frame_->height));
    if (upright_.orientation.op == Orientation::None) {
        converter_->convert(frame_, square, bgr);
        return;
    }
    thread_local cv::Mat stored;
    converter_->convert(frame_, square, stored);
    upright_.turn(stored, bgr);
}

std::shared_ptr<Picture> picture_from_planes(const uint8_t *pixels, int width, int height, int stride, bool nv12) {
    AVFrame *frame = av_frame_alloc();
    if (!frame) throw std::bad_alloc();
    frame->format = nv12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P;
    frame->width = width;
    frame->height = height;
    frame->color_range = AVCOL_RANGE_MPEG;
    frame->colorspace = AVCOL_SPC_SMPTE170M;
    if (av_frame_get_buffer(frame, 0) < 0) {
        av_frame_free(&frame);
        throw std::bad_alloc();
    }
    const uint8_t *chroma = pixels + (size_t)stride * height;
    for (int y = 0; y < height; ++y) std::memcpy(frame->data[0] + (size_t)y * frame->linesize[0], pixels + (size_t)y * stride, width);
    if (nv12) {
        for (int y = 0; y < height / 2; ++y)
            std::memcpy(frame->data[1] + (size_t)y * frame->linesize[1], chroma + (size_t)y * stride, width);
    } else {
        // I420 planes are tightly packed (stride == width).
        const uint8_t *v = chroma + (size_t)(width / 2) * (height / 2);
        for (int y = 0; y < height / 2; ++y) {
            std::memcpy(frame->data[1] + (size_t)y * frame->linesize[1], chroma + (size_t)y * (width / 2), width / 2);
            std::memcpy(frame->data[2] + (size_t)y * frame->linesize[2], v + (size_t)y * (width / 2), width / 2);
        }
    }
    // One converter per thread for these pictures (each conversion takes its lock).
    thread_local std::shared_ptr<ColourConverter> converter = std::make_shared<ColourConverter>();
    return std::make_shared<Picture>(frame, Upright(), converter);
}

void settle(const ft_image &image) {
    std::shared_ptr<Picture> picture = image.picture;
    if (!picture) {
        image.pending.store(false, std::memory_order_release);
        return;
    }
    std::lock_guard<std::mutex> hold(picture->lock);
    if (!image.pending.load(std::memory_order_acquire)) return;
    // The buffer may be shared with a copy made earlier (cv::Mat assignment shares pixels):
    // convert into fresh pixels unless this image is their only owner.
    if (image.pixels.u && image.pixels.u->refcount > 1) image.pixels = cv::Mat();
    picture->colour(image.pixels);
    image.pending.store(false, std::memory_order_release);
}

bool gray_of(const ft_image &image, cv::Mat &out, cv::Mat *half) {
    std::shared_ptr<Picture> picture = image.picture;
    if (picture) return picture->luma(out, half);
    gray_of(image, out);
    return false;
}

void gray_of(const ft_image &image, cv::Mat &out) {
    std::shared_ptr<Picture> picture = image.picture;
    if (picture) return picture->luma(out);
    const cv::Mat &pixels = image.view();
    if (pixels.channels() == 3) cv::cvtColor(pixels, out, cv::COLOR_BGR2GRAY);
    else if (pixels.channels() == 1) pixels.copyTo(out);
    else throw std::invalid_argument("gray: the image has " + std::to_string(pixels.channels()) + " channels");
}

}  // namespace ft

cv::Size ft_image::size() const {
    if (pending.load(std::memory_order_acquire)) {
        std::shared_ptr<ft::Picture> shown = picture;
        if (shown) return shown->size();
    }
    return pixels.size();
}
