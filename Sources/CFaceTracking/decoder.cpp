// Video decoding on libavformat and libavcodec: packets of the stream a player shows, decoded
// on frame threads, pictures handed over as the decoder made them.
#include "decoder.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <cmath>
#include <limits>

namespace ft {

/// Packets in a row that may fail to decode (or be read) before the stream counts as ended:
/// damage is skipped the way a player skips it, a stream of nothing but damage ends.
static constexpr int kMaxFailuresInARow = 512;

Decoder::~Decoder() {
    av_packet_free(&packet_);
    avcodec_free_context(&codec_);
    if (format_) avformat_close_input(&format_);
}

ft_status Decoder::open(const char *path, int stream, ft_error *error) {
    if (avformat_open_input(&format_, path, nullptr, nullptr) < 0 || !format_)
        return set_error(error, "%s: not a video this build can decode (the container cannot be read)", path),
               FT_ERR_UNSUPPORTED;
    if (stream < 0 || stream >= (int)format_->nb_streams ||
        format_->streams[stream]->codecpar->codec_type != AVMEDIA_TYPE_VIDEO) {
        // Formats without a header list their streams only after a look at the first packets.
        format_->probesize = 1 << 20;
        format_->max_analyze_duration = 500000;
        if (avformat_find_stream_info(format_, nullptr) < 0 || stream < 0 || stream >= (int)format_->nb_streams ||
            format_->streams[stream]->codecpar->codec_type != AVMEDIA_TYPE_VIDEO)
            return set_error(error, "%s: the video stream could not be found again", path), FT_ERR_UNSUPPORTED;
    }
    stream_ = stream;
    // Packets of the other streams (audio, metadata, a cover picture) are not even read.
    for (unsigned i = 0; i < format_->nb_streams; ++i)
        if ((int)i != stream) format_->streams[i]->discard = AVDISCARD_ALL;
    AVStream *st = format_->streams[stream];
    const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec)
        return set_error(error, "%s: no decoder in this build for its %s video", path, avcodec_get_name(st->codecpar->codec_id)),
               FT_ERR_UNSUPPORTED;
    codec_ = avcodec_alloc_context3(codec);
    packet_ = av_packet_alloc();
    if (!codec_ || !packet_) return set_error(error, "%s: out of memory", path), FT_ERR_INTERNAL;
    if (avcodec_parameters_to_context(codec_, st->codecpar) < 0)
        return set_error(error, "%s: the video stream's parameters are invalid", path), FT_ERR_UNSUPPORTED;
    codec_->pkt_timebase = st->time_base;
    // FFmpeg's own choice of decoding threads, as the ffmpeg tool decodes: frame and slice
    // threads, one more than the cores this process may use (3 on 2 cores), so that a thread
    // waiting on a reference frame leaves no core idle while the engine tracks beside it.
    codec_->thread_count = 0;
    // What one decoded picture costs, from the stream's declared format: the frame limit counts
    // pixels, but a 50-megapixel 4:4:4 10-bit picture is 300 MB and such a clip peaked at 1.3 GB.
    // Pictures over kMaxPictureBytes are refused; from kSliceThreadsPictureBytes on, only slice
    // threads decode (frame threads each hold pictures of their own: a 16384x3050 4:2:0 clip
    // peaked at 1.2 GB with them, 0.63 GB without), so that any accepted file stays within 1 GB.
    // The container may not say the picture format before decoding (MP4): then the size alone
    // decides, as for 8-bit 4:2:0; the first picture decoded is checked against the limit
    // (Decoder::picture_bytes, video.cpp).
    const AVPixelFormat format = (AVPixelFormat)st->codecpar->format;
    const int64_t declared = picture_bytes(format == AV_PIX_FMT_NONE ? AV_PIX_FMT_YUV420P : format,
                                           st->codecpar->width, st->codecpar->height);
    if (declared > kMaxPictureBytes)
        return set_error(error, "%s: its %dx%d %s pictures are %lld MB each, above the limit of %d MB a decoded picture",
                         path, st->codecpar->width, st->codecpar->height, av_get_pix_fmt_name(format),
                         (long long)(declared >> 20), kMaxPictureBytes >> 20), FT_ERR_LIMIT;
    if (declared > kSliceThreadsPictureBytes) codec_->thread_type = FF_THREAD_SLICE;
    // A picture over the frame limit is refused by libavcodec from its bitstream header, before
    // its buffer is allocated (a 64x64 container whose MJPEG frames are 16000x16000 cost 2.45 GB
    // when each frame was checked after decoding). Such a picture counts as a damaged one.
    codec_->max_pixels = ft_limits_get().max_frame_pixels;
    if (avcodec_open2(codec_, codec, nullptr) < 0)
        return set_error(error, "%s: its %s video cannot be decoded by this build", path, codec->name), FT_ERR_UNSUPPORTED;
    time_base_ = av_q2d(st->time_base);
    start_ = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    return FT_OK;
}

ft_status Decoder::next(AVFrame *frame) {
    av_frame_unref(frame);
    if (finished_) return FT_END_OF_STREAM;
    int failures = 0;
    while (true) {
        int received = avcodec_receive_frame(codec_, frame);
        if (received == 0) {
            if (frame->width > 0 && frame->height > 0 && frame->data[0]) return FT_OK;
            av_frame_unref(frame);
            received = AVERROR_INVALIDDATA;
        }
        if (received == AVERROR_EOF) break;
        if (received != AVERROR(EAGAIN)) {
            // A picture that failed (frame threads report a damaged packet here): skip it.
            ++skipped_;
            if (++failures > kMaxFailuresInARow) break;
            continue;
        }
        if (draining_) break;
        int read = av_read_frame(format_, packet_);
        if (read == AVERROR(EAGAIN)) {
            if (++failures > kMaxFailuresInARow) break;
            continue;
        }
        if (read < 0) {
            // The end of the file (or damage that ends it): the decoder's delayed pictures.
            draining_ = true;
            avcodec_send_packet(codec_, nullptr);
            continue;
        }
        if (packet_->stream_index != stream_) {
            av_packet_unref(packet_);
            continue;
        }
        int sent = avcodec_send_packet(codec_, packet_);
        av_packet_unref(packet_);
        if (sent < 0 && sent != AVERROR(EAGAIN)) {
            ++skipped_;
            if (++failures > kMaxFailuresInARow) break;
        } else {
            failures = 0;
        }
    }
    finished_ = true;
    return FT_END_OF_STREAM;
}

int64_t Decoder::picture_bytes(int format, int width, int height) {
    if (format < 0 || width <= 0 || height <= 0) return 0;
    int bytes = av_image_get_buffer_size((AVPixelFormat)format, width, height, 1);
    return bytes > 0 ? bytes : 0;
}

double Decoder::milliseconds(const AVFrame *frame) const {
    int64_t t = frame->best_effort_timestamp;
    if (t == AV_NOPTS_VALUE) t = frame->pts;
    if (t == AV_NOPTS_VALUE) return std::numeric_limits<double>::quiet_NaN();
    return (double)(t - start_) * time_base_ * 1000.0;
}

}  // namespace ft
