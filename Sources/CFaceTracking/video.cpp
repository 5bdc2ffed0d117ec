// Video reading: the container's judgement (container.cpp), the decoder (decoder.cpp), each
// picture shown upright in an image whose colour is converted only when read (picture.cpp), with
// its presentation timestamp; and video writing for annotated output (OpenCV videoio).
#include "container.hpp"
#include "decoder.hpp"
#include "internal.hpp"
#include "picture.hpp"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
}

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
    ft::Decoder decoder;
    std::string path;
    std::shared_ptr<ft::ColourConverter> converter = std::make_shared<ft::ColourConverter>();
    ft::Upright upright;
    std::shared_ptr<ft::Picture> pending;  // the first picture, decoded at open to prove the file is decodable
    double pending_ms = 0;
    bool ended = false;
    double fps = 0;
    double last_ms = -1;      // timestamp of the previous frame delivered
    int extrapolated_run = 0; // consecutive frames whose timestamp had to be extrapolated
};

/// The samples' aspect ratios accepted: beyond these a file is more likely broken than anamorphic.
static constexpr double kMinSampleAspect = 0.25, kMaxSampleAspect = 4.0;

/// Frames in a row that may come without a timestamp (they get the previous one plus a frame
/// interval); beyond that the stream's timestamps have stopped.
static constexpr int kMaxExtrapolatedFrames = 48;

/// A picture without a timestamp (NaN) gets the previous timestamp plus one nominal frame
/// interval. Returns false when too many frames in a row had none: that is a stream whose
/// timestamps stop.
static bool frame_timestamp(ft_video &video, double reported_ms, double &out) {
    if (std::isnan(reported_ms)) {
        if (++video.extrapolated_run > kMaxExtrapolatedFrames) return false;
        double interval = video.fps > 0 ? 1000.0 / video.fps : 1000.0 / 30.0;
        reported_ms = video.last_ms >= 0 ? video.last_ms + interval : 0;
    } else {
        video.extrapolated_run = 0;
    }
    video.last_ms = reported_ms;
    out = reported_ms;
    return true;
}

/// Decodes the next picture; FT_END_OF_STREAM, FT_ERR_LIMIT for a picture larger than the
/// limits (a stream may change size midway), or FT_OK with `picture` and its timestamp (NaN
/// when it has none).
static ft_status next_picture(ft_video &video, std::shared_ptr<ft::Picture> &picture, double &ms, ft_error *error) {
    AVFrame *frame = av_frame_alloc();
    if (!frame) return ft::set_error(error, "%s: out of memory", video.path.c_str()), FT_ERR_INTERNAL;
    ft_status status = video.decoder.next(frame);
    if (status != FT_OK) {
        av_frame_free(&frame);
        return status;
    }
    ms = video.decoder.milliseconds(frame);
    cv::Size size = video.upright.size(cv::Size(frame->width, frame->height));
    ft_limits limits = ft_limits_get();
    if (size.width > limits.max_frame_side || size.height > limits.max_frame_side ||
        (int64_t)size.width * size.height > limits.max_frame_pixels) {
        av_frame_free(&frame);
        ft::set_error(error, "%s: a frame of %dx%d pixels exceeds the limit (%lld megapixels, %d pixels a side)",
                      video.path.c_str(), size.width, size.height, (long long)(limits.max_frame_pixels / 1000000),
                      limits.max_frame_side);
        return FT_ERR_LIMIT;
    }
    const int64_t bytes = ft::Decoder::picture_bytes(frame->format, frame->width, frame->height);
    if (bytes > ft::Decoder::kMaxPictureBytes) {
        ft::set_error(error, "%s: its %dx%d %s pictures are %lld MB each, above the limit of %lld MB a decoded picture",
                      video.path.c_str(), frame->width, frame->height, av_get_pix_fmt_name((AVPixelFormat)frame->format),
                      (long long)(bytes >> 20), (long long)(ft::Decoder::kMaxPictureBytes >> 20));
        av_frame_free(&frame);
        return FT_ERR_LIMIT;
    }
    picture = std::make_shared<ft::Picture>(frame, video.upright, video.converter);
    return FT_OK;
}

/// Shows `picture` in `image`: its colour is converted when first read.
static void show(ft_image &image, std::shared_ptr<ft::Picture> picture) {
    image.replace();
    image.picture = std::move(picture);
    image.pending.store(true, std::memory_order_release);
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
        // Checked on the stored size stretched to square pixels, before any frame is decoded.
        ft::Upright declared;
        declared.sample_aspect = sa;
        cv::Size square = declared.square(cv::Size(container.stored_width, container.stored_height));
        int square_width = square.width, square_height = square.height;
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
        video->upright.orientation = container.orientation;
        video->upright.sample_aspect = std::abs(sa - 1) < 1e-3 ? 1.0 : sa;
        ft::configure_libraries();
        status = video->decoder.open(path, container.stream_index, error);
        if (status != FT_OK) return status;
        double fps = container.frames_per_second;
        video->fps = std::isfinite(fps) && fps > 0 && fps < 100000 ? fps : 0;
        double first_ms = 0;
        status = next_picture(*video, video->pending, first_ms, error);
        if (status == FT_END_OF_STREAM) {
            ft::set_error(error, "%s: the container opened but no frame could be decoded (corrupt or truncated)", path);
            return FT_ERR_DECODE;
        }
        if (status != FT_OK) return status;
        frame_timestamp(*video, first_ms, video->pending_ms);
        if (info) {
            cv::Size upright = video->pending->size();
            info->width = upright.width;
            info->height = upright.height;
            info->fps = video->fps;
            info->frame_count = container.frame_count > 0 ? container.frame_count : 0;
            info->rotation_degrees = video->upright.orientation.clockwise_degrees();
            info->mirrored = video->upright.orientation.mirrored() ? 1 : 0;
            info->duration_seconds = container.duration_seconds > 0 ? container.duration_seconds
                                     : info->fps > 0 ? (double)info->frame_count / info->fps : 0;
            info->stored_width = container.stored_width;
            info->stored_height = container.stored_height;
            info->sample_aspect_ratio = video->upright.sample_aspect;
        }
        *out = video.release();
        return FT_OK;
    });
}

ft_status ft_video_read(ft_video *video, ft_image *frame, double *timestamp_ms, ft_error *error) {
    if (!video || !frame) return ft::set_error(error, "read: null argument"), FT_ERR_ARGUMENT;
    if (video->pending) {
        show(*frame, std::move(video->pending));
        video->pending.reset();
        if (timestamp_ms) *timestamp_ms = video->pending_ms;
        return FT_OK;
    }
    if (video->ended) return FT_END_OF_STREAM;
    return ft::guarded(error, video->path.c_str(), [&] {
        std::shared_ptr<ft::Picture> picture;
        double reported = 0;
        ft_status status = next_picture(*video, picture, reported, error);
        if (status != FT_OK) {
            // A truncated or damaged file stops decoding early; that is the end of the stream.
            video->ended = true;
            return status;
        }
        double ms = 0;
        if (!frame_timestamp(*video, reported, ms)) {
            video->ended = true;
            ft::set_error(error, "%s: more than %d frames in a row carry no timestamp (after %.3f s); time comes "
                                 "from the frames", video->path.c_str(), kMaxExtrapolatedFrames, video->last_ms / 1000);
            return FT_ERR_DECODE;
        }
        show(*frame, std::move(picture));
        if (timestamp_ms) *timestamp_ms = ms;
        return FT_OK;
    });
}

int ft_video_skipped_pictures(const ft_video *video) { return video ? video->decoder.skipped() : 0; }

void ft_video_close(ft_video *video) {
    if (!video) return;
    ft::quietly([&] { delete video; });
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
    if (!writer || !frame || frame->empty()) return ft::set_error(error, "writer: empty frame"), FT_ERR_ARGUMENT;
    if (frame->size() != writer->size)
        return ft::set_error(error, "writer: frame is %dx%d, the video %dx%d", frame->size().width, frame->size().height,
                             writer->size.width, writer->size.height), FT_ERR_ARGUMENT;
    return ft::guarded(error, "writer", [&] {
        writer->writer.write(frame->view());
        return FT_OK;
    });
}

void ft_video_writer_close(ft_video_writer *writer) {
    if (!writer) return;
    ft::quietly([&] { writer->writer.release(); });
    delete writer;
}

}  // extern "C"
