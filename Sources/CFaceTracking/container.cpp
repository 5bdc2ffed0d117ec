// What a video container says before any frame is decoded (libavformat): the video stream's
// coded size, frame rate and frame count, its display matrix, and whether its packets carry
// timestamps. The decoder (decoder.cpp) reads the frames; this file only reads the header and
// the first packets, so that a file is judged (too large, no video, no timestamps) before a
// single frame is decoded, and so that the display matrix is read the way FFmpeg's own player
// reads it (OpenCV 4.6 turns ±90° matrices the wrong way, opencv/opencv#22088, and ignores
// mirroring).
#include "container.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/log.h>
}

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ft {

void configure_libraries() {
    static std::once_flag once;
    std::call_once(once, [] {
        // FFmpeg's own lines ("moov atom not found", decoder warnings) would reach the user's
        // terminal beside the engine's errors; the engine reports every problem itself.
        // OpenCV re-reads this when its FFmpeg backend starts (it would otherwise reset the
        // level to "error"), and its own logging is silenced the same way.
        setenv("OPENCV_FFMPEG_LOGLEVEL", "-8", 0);  // AV_LOG_QUIET
        setenv("OPENCV_LOG_LEVEL", "SILENT", 0);
        setenv("OPENCV_VIDEOIO_DEBUG", "0", 0);
    });
    av_log_set_level(AV_LOG_QUIET);
}

namespace {

/// The orientation FFmpeg's player applies for a display matrix (fftools' autorotation): the
/// rotation angle theta = -av_display_rotation_get(m), then transpose/flip by the signs of the
/// matrix entries, as ffmpeg/ffplay do since FFmpeg 6 (5.1, Debian 12's, ignores mirroring).
Orientation orientation_for(const int32_t *m) {
    Orientation o;
    double angle = av_display_rotation_get(m);
    if (std::isnan(angle)) return o;
    double theta = -std::round(angle);
    theta -= 360 * std::floor(theta / 360 + 0.9 / 360);
    o.theta_degrees = theta;
    if (std::fabs(theta - 90) < 1.0) {
        o.op = m[3] > 0 ? Orientation::Transpose : Orientation::RotateClockwise;
    } else if (std::fabs(theta - 180) < 1.0) {
        bool h = m[0] < 0, v = m[4] < 0;
        o.op = h && v ? Orientation::Rotate180 : h ? Orientation::FlipHorizontal : v ? Orientation::FlipVertical
                                                                                  : Orientation::None;
    } else if (std::fabs(theta - 270) < 1.0) {
        o.op = m[3] < 0 ? Orientation::AntiTranspose : Orientation::RotateCounterClockwise;
    } else if (std::fabs(theta) > 1.0 && std::fabs(theta - 360) > 1.0) {
        o.op = Orientation::Arbitrary;
    } else if (m[4] < 0) {
        o.op = Orientation::FlipVertical;
    }
    return o;
}

struct FormatContext {
    AVFormatContext *context = nullptr;
    ~FormatContext() {
        if (context) avformat_close_input(&context);
    }
};

}  // namespace

int Orientation::clockwise_degrees() const {
    switch (op) {
        case RotateClockwise: case Transpose: return 90;
        case Rotate180: case FlipHorizontal: return 180;
        case RotateCounterClockwise: case AntiTranspose: return 270;
        case Arbitrary: return (int)std::lround(theta_degrees) % 360;
        default: return 0;
    }
}

bool Orientation::mirrored() const {
    return op == Transpose || op == AntiTranspose || op == FlipHorizontal || op == FlipVertical;
}

bool Orientation::swaps_sides() const {
    return op == RotateClockwise || op == RotateCounterClockwise || op == Transpose || op == AntiTranspose;
}

ft_status probe_container(const char *path, ContainerInfo &info, ft_error *error) {
    configure_libraries();
    FormatContext format;
    int status = avformat_open_input(&format.context, path, nullptr, nullptr);
    if (status < 0) {
        char reason[128];
        av_strerror(status, reason, sizeof reason);
        set_error(error, "%s: not a video this build can decode (%s)", path, reason);
        return FT_ERR_UNSUPPORTED;
    }
    // The header alone gives the streams of MP4/MOV/MKV/WebM; formats without a header (raw
    // streams, some AVIs) need a look at the first packets. Bounded: at most 1 MB or 0.5 s.
    int index = av_find_best_stream(format.context, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (index < 0 || format.context->streams[index]->codecpar->width <= 0) {
        format.context->probesize = 1 << 20;
        format.context->max_analyze_duration = 500000;
        if (avformat_find_stream_info(format.context, nullptr) < 0) {
            set_error(error, "%s: not a video this build can decode (no readable stream information)", path);
            return FT_ERR_UNSUPPORTED;
        }
        index = av_find_best_stream(format.context, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    }
    if (index < 0) {
        bool audio = av_find_best_stream(format.context, AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0) >= 0;
        set_error(error, "%s: no video stream in this file%s", path, audio ? " (it holds only audio)" : "");
        return FT_ERR_UNSUPPORTED;
    }
    info.stream_index = index;
    AVStream *stream = format.context->streams[index];
    info.stored_width = stream->codecpar->width;
    info.stored_height = stream->codecpar->height;
    AVRational rate = stream->avg_frame_rate.num > 0 && stream->avg_frame_rate.den > 0 ? stream->avg_frame_rate
                                                                                         : stream->r_frame_rate;
    info.frames_per_second = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
    info.frame_count = stream->nb_frames > 0 ? stream->nb_frames : 0;
    info.duration_seconds = stream->duration != AV_NOPTS_VALUE && stream->duration > 0
                                ? stream->duration * av_q2d(stream->time_base)
                                : (format.context->duration > 0 ? format.context->duration / (double)AV_TIME_BASE : 0);
    // Non-square pixels (anamorphic video): a player stretches them; the engine must too, or a
    // face is measured squashed (its pose read tens of degrees off).
    AVRational sar = av_guess_sample_aspect_ratio(format.context, stream, nullptr);
    info.sample_aspect = sar.num > 0 && sar.den > 0 ? av_q2d(sar) : 1.0;
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix && size >= 9 * sizeof(int32_t)) {
        int32_t m[9];
        std::memcpy(m, matrix, sizeof m);
        info.orientation = orientation_for(m);
    }
    // Timestamps: the first packets of the video stream. Packets all without a timestamp (a raw
    // elementary stream) or all with the same one (a container written with every timestamp 0)
    // leave nothing to measure time by.
    AVPacket *packet = av_packet_alloc();
    if (!packet) return set_error(error, "%s: out of memory", path), FT_ERR_INTERNAL;
    int seen = 0, stamped = 0;
    int64_t first = AV_NOPTS_VALUE;
    bool distinct = false;
    for (int reads = 0; seen < 12 && reads < 256 && av_read_frame(format.context, packet) >= 0; ++reads) {
        if (packet->stream_index == index) {
            ++seen;
            int64_t t = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
            if (t != AV_NOPTS_VALUE) {
                ++stamped;
                if (first == AV_NOPTS_VALUE) first = t;
                else if (t != first) distinct = true;
            }
        }
        av_packet_unref(packet);
    }
    av_packet_free(&packet);
    info.packets_seen = seen;
    info.timestamps_missing = seen >= 2 && (stamped == 0 || !distinct);
    return FT_OK;
}

}  // namespace ft
