// Video decoding with real presentation timestamps and rotation metadata (OpenCV videoio,
// FFmpeg backend), and video writing for annotated output.
#include "container.hpp"
#include "internal.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <sys/stat.h>

struct ft_video {
    cv::VideoCapture capture;
    std::string path;
    cv::Mat pending;          // the first frame, decoded at open to prove the file is decodable
    double pending_ms = 0;
    bool has_pending = false;
    bool ended = false;
    double fps = 0;
    double last_ms = -1;      // timestamp of the previous frame delivered
    int extrapolated_run = 0; // consecutive frames whose timestamp had to be extrapolated
    ft::Orientation orientation;
    cv::Mat stored;           // the frame as decoded, before turning it upright
    double sample_aspect = 1; // width:height of a stored pixel
    cv::Size square;          // the stored frame's size in square pixels (one side stretched)
    cv::Mat squared;          // the stored frame stretched to square pixels
};

/// The samples' aspect ratios accepted: beyond these a file is more likely broken than anamorphic.
static constexpr double kMinSampleAspect = 0.25, kMaxSampleAspect = 4.0;

/// Frames drained from the decoder at the end of a stream: at most its delay (B-frames plus one
/// frame per decoding thread; OpenCV uses up to 16 threads).
static constexpr int kMaxExtrapolatedFrames = 48;

/// OpenCV 4.6 reports CAP_PROP_POS_MSEC as 0 for the frames it drains from the decoder at the
/// end of a stream (their packets carried the timestamps). Those frames are real; give them
/// the previous timestamp plus one nominal frame interval. Returns false when too many frames
/// in a row had no timestamp: that is not a drain but a stream whose timestamps stop.
static bool frame_timestamp(ft_video &video, double reported_ms, double &out) {
    if (video.last_ms >= 0 && reported_ms <= 0) {
        if (++video.extrapolated_run > kMaxExtrapolatedFrames) return false;
        double interval = video.fps > 0 ? 1000.0 / video.fps : 1000.0 / 30.0;
        reported_ms = video.last_ms + interval;
    } else {
        video.extrapolated_run = 0;
    }
    video.last_ms = reported_ms;
    out = reported_ms;
    return true;
}

/// Turns a stored frame upright the way FFmpeg's player does for the stream's display matrix.
static void make_upright(const ft::Orientation &o, cv::Mat &stored, cv::Mat &out) {
    using O = ft::Orientation;
    switch (o.op) {
        case O::None: out = stored; return;
        case O::RotateClockwise: cv::rotate(stored, out, cv::ROTATE_90_CLOCKWISE); return;
        case O::RotateCounterClockwise: cv::rotate(stored, out, cv::ROTATE_90_COUNTERCLOCKWISE); return;
        case O::Rotate180: cv::rotate(stored, out, cv::ROTATE_180); return;
        case O::Transpose: cv::transpose(stored, out); return;
        case O::AntiTranspose: {
            cv::Mat t;
            cv::transpose(stored, t);
            cv::flip(t, out, -1);
            return;
        }
        case O::FlipHorizontal: cv::flip(stored, out, 1); return;
        case O::FlipVertical: cv::flip(stored, out, 0); return;
        case O::Arbitrary: {
            // FFmpeg's rotate filter: about the centre, same frame size, corners filled black.
            // Its angle is counter-clockwise for positive values; theta is clockwise.
            cv::Point2f centre(stored.cols / 2.0f, stored.rows / 2.0f);
            cv::Mat m = cv::getRotationMatrix2D(centre, -o.theta_degrees, 1.0);
            cv::warpAffine(stored, out, m, stored.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar());
            return;
        }
    }
    out = stored;
}

/// Decodes the next stored frame, stretches non-square pixels square (one side enlarged, as a
/// player shows them) and turns it upright into `frame`.
static bool read_upright(ft_video &video, cv::Mat &frame) {
    bool anamorphic = video.sample_aspect != 1;
    if (video.orientation.op == ft::Orientation::None && !anamorphic) return video.capture.read(frame) && !frame.empty();
    if (!video.capture.read(video.stored) || video.stored.empty()) return false;
    if (anamorphic && video.orientation.op == ft::Orientation::None) {
        // Straight into the caller's frame: `squared` is reused for the next frame, and frames
        // decoded ahead must not share its pixels.
        cv::resize(video.stored, frame, video.square, 0, 0, cv::INTER_LINEAR);
    } else if (anamorphic) {
        cv::resize(video.stored, video.squared, video.square, 0, 0, cv::INTER_LINEAR);
        make_upright(video.orientation, video.squared, frame);
    } else {
        make_upright(video.orientation, video.stored, frame);
    }
    return !frame.empty();
}

struct ft_video_writer {
    cv::VideoWriter writer;
    cv::Size size;
};

/// Checks that `path` names a readable, non-empty regular file.
static ft_status check_file(const char *path, ft_error *error) {
    struct stat st;
    if (stat(path, &st) != 0) return ft::set_error(error, "%s: %s", path, std::strerror(errno)), FT_ERR_NOT_FOUND;
    if (!S_ISREG(st.st_mode)) return ft::set_error(error, "%s: not a regular file", path), FT_ERR_NOT_FOUND;
    FILE *probe = std::fopen(path, "rb");
    if (!probe) return ft::set_error(error, "%s: %s", path, std::strerror(errno)), FT_ERR_NOT_FOUND;
    std::fclose(probe);
    if (st.st_size == 0) return ft::set_error(error, "%s: empty file (0 bytes)", path), FT_ERR_UNSUPPORTED;
    return FT_OK;
}

extern "C" {

ft_limits ft_limits_get(void) {
    ft_limits limits;
    limits.max_frame_pixels = 50000000;
    limits.max_frame_side = 16384;
    return limits;
}

ft_status ft_video_open(const char *path, ft_video **out, ft_video_info *info, ft_error *error) {
    if (!path || !out) return ft::set_error(error, "open: null argument"), FT_ERR_ARGUMENT;
    *out = nullptr;
    ft_status status = check_file(path, error);
    if (status != FT_OK) return status;
    return ft::guarded(error, path, [&] {
        ft::ContainerInfo container;
        ft_status probed = ft::probe_container(path, container, error);
        if (probed != FT_OK) return probed;
        ft_limits limits = ft_limits_get();
        double sa = container.sample_aspect;
        if (!(sa >= kMinSampleAspect && sa <= kMaxSampleAspect)) {
            ft::set_error(error, "%s: pixels %g times as wide as high (sample aspect ratio); only 1/4 to 4 is accepted",
                          path, sa);
            return FT_ERR_UNSUPPORTED;
        }
        // Square pixels: the wider side of a pixel is kept, the other stretched to match.
        int square_width = sa > 1 ? (int)std::lround(container.stored_width * sa) : container.stored_width;
        int square_height = sa < 1 ? (int)std::lround(container.stored_height / sa) : container.stored_height;
        int64_t pixels = (int64_t)square_width * square_height;
        if (square_width > limits.max_frame_side || square_height > limits.max_frame_side ||
            pixels > limits.max_frame_pixels) {
            ft::set_error(error, "%s: frames of %dx%d pixels exceed the limit (%lld megapixels, %d pixels a side)", path,
                          square_width, square_height, (long long)(limits.max_frame_pixels / 1000000), limits.max_frame_side);
            return FT_ERR_LIMIT;
        }
        if (container.timestamps_missing) {
            ft::set_error(error, "%s: the video's frames carry no timestamps (raw stream, or every frame at the same "
                                 "time); time comes from the frames, so it cannot be judged: remux it into a "
                                 "container with timestamps", path);
            return FT_ERR_DECODE;
        }
        auto video = std::make_unique<ft_video>();
        video->path = path;
        video->orientation = container.orientation;
        video->sample_aspect = std::abs(sa - 1) < 1e-3 ? 1.0 : sa;
        video->square = cv::Size(square_width, square_height);
        // Only FFmpeg: other backends (the image-sequence reader) would accept odd inputs.
        if (!video->capture.open(path, cv::CAP_FFMPEG)) {
            ft::set_error(error, "%s: not a video this build can decode (unknown format, corrupt, or truncated)", path);
            return FT_ERR_UNSUPPORTED;
        }
        ft::configure_libraries();
        // The display matrix is applied here, as FFmpeg's player applies it: OpenCV 4.6 turns
        // ±90° the wrong way (opencv/opencv#22088) and ignores mirroring.
        video->capture.set(cv::CAP_PROP_ORIENTATION_AUTO, 0);
        if (!read_upright(*video, video->pending)) {
            ft::set_error(error, "%s: the container opened but no frame could be decoded (corrupt or truncated)", path);
            return FT_ERR_DECODE;
        }
        double fps = container.frames_per_second > 0 ? container.frames_per_second : video->capture.get(cv::CAP_PROP_FPS);
        video->fps = std::isfinite(fps) && fps > 0 && fps < 100000 ? fps : 0;
        frame_timestamp(*video, video->capture.get(cv::CAP_PROP_POS_MSEC), video->pending_ms);
        video->has_pending = true;
        if (info) {
            info->width = video->pending.cols;
            info->height = video->pending.rows;
            info->fps = video->fps;
            double count = container.frame_count > 0 ? (double)container.frame_count
                                                     : video->capture.get(cv::CAP_PROP_FRAME_COUNT);
            info->frame_count = std::isfinite(count) && count > 0 ? (int64_t)std::llround(count) : 0;
            info->rotation_degrees = video->orientation.clockwise_degrees();
            info->mirrored = video->orientation.mirrored() ? 1 : 0;
            info->duration_seconds = container.duration_seconds > 0 ? container.duration_seconds
                                     : info->fps > 0 ? (double)info->frame_count / info->fps : 0;
            info->stored_width = container.stored_width;
            info->stored_height = container.stored_height;
            info->sample_aspect_ratio = video->sample_aspect;
        }
        *out = video.release();
        return FT_OK;
    });
}

ft_status ft_video_read(ft_video *video, ft_image *frame, double *timestamp_ms, ft_error *error) {
    if (frame) frame->halves_of = nullptr;  // the pixels change
    if (!video || !frame) return ft::set_error(error, "read: null argument"), FT_ERR_ARGUMENT;
    if (video->has_pending) {
        frame->mat = video->pending;
        video->pending = cv::Mat();
        video->has_pending = false;
        if (timestamp_ms) *timestamp_ms = video->pending_ms;
        return FT_OK;
    }
    if (video->ended) return FT_END_OF_STREAM;
    return ft::guarded(error, video->path.c_str(), [&] {
        // A truncated or damaged file stops decoding early; that is the end of the stream.
        if (!read_upright(*video, frame->mat)) {
            video->ended = true;
            return FT_END_OF_STREAM;
        }
        double ms = 0;
        if (!frame_timestamp(*video, video->capture.get(cv::CAP_PROP_POS_MSEC), ms)) {
            video->ended = true;
            ft::set_error(error, "%s: more than %d frames in a row carry no timestamp (after %.3f s); time comes "
                                 "from the frames", video->path.c_str(), kMaxExtrapolatedFrames, video->last_ms / 1000);
            return FT_ERR_DECODE;
        }
        if (timestamp_ms) *timestamp_ms = ms;
        return FT_OK;
    });
}

void ft_video_close(ft_video *video) {
    if (!video) return;
    ft::quietly([&] { video->capture.release(); });
    delete video;
}

ft_status ft_video_writer_open(const char *path, double fps, int width, int height, ft_video_writer **out,
                               ft_error *error) {
    if (!path || !out || width <= 0 || height <= 0 || !(fps > 0))
        return ft::set_error(error, "writer: bad arguments"), FT_ERR_ARGUMENT;
    *out = nullptr;
    return ft::guarded(error, path, [&] {
        std::string name(path);
        bool avi = name.size() >= 4 && name.compare(name.size() - 4, 4, ".avi") == 0;
        int fourcc = avi ? cv::VideoWriter::fourcc('M', 'J', 'P', 'G') : cv::VideoWriter::fourcc('m', 'p', '4', 'v');
        auto writer = std::make_unique<ft_video_writer>();
        writer->size = cv::Size(width, height);
        if (!writer->writer.open(path, cv::CAP_FFMPEG, fourcc, fps, writer->size, true)) {
            ft::set_error(error, "%s: could not open a video writer", path);
            return FT_ERR_ENCODE;
        }
        *out = writer.release();
        return FT_OK;
    });
}

ft_status ft_video_writer_write(ft_video_writer *writer, const ft_image *frame, ft_error *error) {
    if (!writer || !frame || frame->mat.empty()) return ft::set_error(error, "writer: empty frame"), FT_ERR_ARGUMENT;
    if (frame->mat.size() != writer->size)
        return ft::set_error(error, "writer: frame is %dx%d, the video %dx%d", frame->mat.cols, frame->mat.rows,
                             writer->size.width, writer->size.height), FT_ERR_ARGUMENT;
    return ft::guarded(error, "writer", [&] {
        writer->writer.write(frame->mat);
        return FT_OK;
    });
}

void ft_video_writer_close(ft_video_writer *writer) {
    if (!writer) return;
    ft::quietly([&] { writer->writer.release(); });
    delete writer;
}

}  // extern "C"
