// Video decoding with real presentation timestamps and rotation metadata (OpenCV videoio,
// FFmpeg backend), and video writing for annotated output.
#include "internal.hpp"

#include <opencv2/imgcodecs.hpp>
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
};

/// OpenCV 4.6 reports CAP_PROP_POS_MSEC as 0 for the frames it drains from the decoder at the
/// end of a stream (their packets carried the timestamps). Those frames are real; give them
/// the previous timestamp plus one nominal frame interval.
static double frame_timestamp(ft_video &video, double reported_ms) {
    if (video.last_ms >= 0 && reported_ms <= 0) {
        double interval = video.fps > 0 ? 1000.0 / video.fps : 1000.0 / 30.0;
        reported_ms = video.last_ms + interval;
    }
    video.last_ms = reported_ms;
    return reported_ms;
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

ft_status ft_video_open(const char *path, ft_video **out, ft_video_info *info, ft_error *error) {
    if (!path || !out) return ft::set_error(error, "open: null argument"), FT_ERR_ARGUMENT;
    *out = nullptr;
    ft_status status = check_file(path, error);
    if (status != FT_OK) return status;
    return ft::guarded(error, path, [&] {
        auto video = std::make_unique<ft_video>();
        video->path = path;
        // Only FFmpeg: other backends (the image-sequence reader) would accept odd inputs.
        if (!video->capture.open(path, cv::CAP_FFMPEG)) {
            ft::set_error(error, "%s: not a video this build can decode (unknown format, corrupt, or truncated)", path);
            return FT_ERR_UNSUPPORTED;
        }
        // Apply the stream's rotation metadata so that a portrait phone video comes out upright.
        video->capture.set(cv::CAP_PROP_ORIENTATION_AUTO, 1);
        int rotation = (int)std::lround(video->capture.get(cv::CAP_PROP_ORIENTATION_META));
        rotation = ((rotation % 360) + 360) % 360;
        if (!video->capture.read(video->pending) || video->pending.empty()) {
            ft::set_error(error, "%s: the container opened but no frame could be decoded (corrupt or truncated)", path);
            return FT_ERR_DECODE;
        }
        double fps = video->capture.get(cv::CAP_PROP_FPS);
        video->fps = std::isfinite(fps) && fps > 0 && fps < 1000 ? fps : 0;
        video->pending_ms = frame_timestamp(*video, video->capture.get(cv::CAP_PROP_POS_MSEC));
        video->has_pending = true;
        if (info) {
            info->width = video->pending.cols;
            info->height = video->pending.rows;
            info->fps = video->fps;
            double count = video->capture.get(cv::CAP_PROP_FRAME_COUNT);
            info->frame_count = std::isfinite(count) && count > 0 ? (int64_t)std::llround(count) : 0;
            info->rotation_degrees = rotation;
            info->duration_seconds = info->fps > 0 ? (double)info->frame_count / info->fps : 0;
        }
        *out = video.release();
        return FT_OK;
    });
}

ft_status ft_video_read(ft_video *video, ft_image *frame, double *timestamp_ms, ft_error *error) {
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
        if (!video->capture.read(frame->mat) || frame->mat.empty()) {
            video->ended = true;
            return FT_END_OF_STREAM;
        }
        double ms = frame_timestamp(*video, video->capture.get(cv::CAP_PROP_POS_MSEC));
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
