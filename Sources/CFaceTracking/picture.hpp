// A decoded video picture and the two ways the engine reads it: its luma plane as the frame's
// grey copy (no colour conversion), and its colour converted to upright BGR only when asked
// for (a still, an annotated frame, pixels a caller reads). Internal to the shim.
#pragma once
#include "container.hpp"

#include <opencv2/core.hpp>

#include <memory>
#include <mutex>

extern "C" {
#include <libavutil/pixfmt.h>
}

struct AVFrame;
struct SwsContext;

namespace ft {

/// How a stored picture becomes the frame a player shows: non-square pixels stretched square
/// (one side enlarged), then the display matrix's turn or mirror.
struct Upright {
    Orientation orientation;
    double sample_aspect = 1;  // width:height of a stored pixel; 1 for square pixels

    /// The stored size stretched to square pixels.
    cv::Size square(cv::Size stored) const;
    /// The upright size of a stored picture of `stored` pixels.
    cv::Size size(cv::Size stored) const;
    /// Makes `out` the upright version of `square` (a stored picture already stretched to square
    /// pixels, any type): the display matrix's turn or mirror. `out` must not share its pixels.
    void turn(const cv::Mat &square, cv::Mat &out) const;
};

/// Converts decoded pictures of one stream to BGR or grey (libswscale, the picture's own colour
/// matrix and range, as ffmpeg converts to bgr24 and gray), scaled when asked for another size
/// (bicubic, as ffmpeg's scale filter stretches non-square pixels); one conversion at a time.
class ColourConverter {
public:
    ~ColourConverter();
    /// `frame` converted to 8-bit BGR of `size` pixels into `bgr`.
    void convert(const AVFrame *frame, cv::Size size, cv::Mat &bgr);
    /// `frame` converted to 8-bit grey of `size` pixels into `grey` (for pictures without an
    /// 8-bit luma plane, 10-bit video, RGB formats, and for stretching non-square pixels).
    void grey(const AVFrame *frame, cv::Size size, cv::Mat &grey);
private:
    std::mutex lock_;
    void convert(const AVFrame *frame, cv::Size size, AVPixelFormat to, SwsContext *&context, cv::Mat &out);
    SwsContext *context_ = nullptr;
    SwsContext *grey_context_ = nullptr;
};

/// One decoded picture (a reference to the decoder's buffer, released with the picture).
class Picture {
public:
    /// Takes ownership of `frame` (av_frame_free at destruction).
    Picture(AVFrame *frame, Upright upright, std::shared_ptr<ColourConverter> converter);
    ~Picture();
    Picture(const Picture &) = delete;
    Picture &operator=(const Picture &) = delete;

    /// The upright frame's size, pixels.
    cv::Size size() const { return size_; }
    /// The upright grey frame, as ffmpeg converts the picture to gray: from an 8-bit luma plane
    /// (planar or semi-planar YUV, grey) limited-range luma (16...235) is expanded to 0...255,
    /// rounded and clipped, and full-range luma kept as it is (a table lookup); other formats
    /// (10-bit, RGB) go through libswscale. About 1.3 levels brighter on average than OpenCV's
    /// fast BGR conversion followed by a grey conversion.
    void luma(cv::Mat &grey) const;
    /// The same, and when `half` is given and the frame is an upright limited-range 8-bit luma
    /// plane of square pixels (most video), its reduction by 2 in the same pass (exactly
    /// OpenCV's area resize of the even crop); true when `half` was made.
    bool luma(cv::Mat &grey, cv::Mat *half) const;
    /// The upright BGR frame.
    void colour(cv::Mat &bgr) const;
    /// Copies the picture's planes, tightly packed (Y, then U, then V), into `out` when it is
    /// 8-bit 4:2:0 YUV of even size, limited range, already upright with square pixels: the
    /// bytes an I420 frame carries. False otherwise.
    bool copy_i420(uint8_t *out, size_t capacity) const;

    /// Serialises the conversion of an image's colour made from this picture.
    std::mutex lock;

private:
    AVFrame *frame_;
    Upright upright_;
    std::shared_ptr<ColourConverter> converter_;
    cv::Size size_;
    bool has_luma_ = false;
    bool full_range_ = false;
};

/// A picture holding a copy of 4:2:0 pixels: a Y plane (rows `stride` bytes apart) then the
/// interleaved U/V plane (`nv12`) or the U and V planes, limited range, BT.601.
std::shared_ptr<Picture> picture_from_planes(const uint8_t *pixels, int width, int height, int stride, bool nv12);

/// The frame's grey pixels: from a decoded picture's luma plane when the image still holds
/// that picture's pixels, else converted from its BGR (or copied when already grey).
void gray_of(const ft_image &image, cv::Mat &out);
/// The same, with the reduction by 2 made in the same pass when `Picture::luma` can; true then.
bool gray_of(const ft_image &image, cv::Mat &out, cv::Mat *half);

}  // namespace ft
