// A video stream decoded with libavformat and libavcodec directly: the pictures as the decoder
// makes them (no colour conversion) with their presentation timestamps. Internal to the shim.
#pragma once
#include <atomic>
#include "internal.hpp"

#include <cstdint>
#include <string>

struct AVFormatContext;
struct AVCodecContext;
struct AVPacket;
struct AVFrame;

namespace ft {

class Decoder {
public:
    Decoder() = default;
    ~Decoder();
    Decoder(const Decoder &) = delete;
    Decoder &operator=(const Decoder &) = delete;

    /// Opens `path` and the decoder of its video stream number `stream` (the one a player
    /// shows). FT_ERR_UNSUPPORTED with a message when the stream cannot be decoded.
    ft_status open(const char *path, int stream, ft_error *error);

    /// Decodes the next picture into `frame` (unreferenced first). FT_OK, or FT_END_OF_STREAM
    /// at the end of the file, after the decoder's delayed pictures, or when the stream is
    /// damaged beyond recovery (more than a few hundred packets in a row fail to decode).
    ft_status next(AVFrame *frame);

    /// `frame`'s presentation time in milliseconds from the stream's start, or NaN when it
    /// carries no timestamp.
    double milliseconds(const AVFrame *frame) const;

    /// Pictures skipped so far: damaged packets, and pictures over the frame limit, which
    /// libavcodec refuses from their header before decoding them.
    int skipped() const { return skipped_.load(std::memory_order_relaxed); }

    /// Bytes of one decoded picture of `format` (an AVPixelFormat), 0 when unknown.
    static int64_t picture_bytes(int format, int width, int height);
    /// The largest decoded picture accepted, bytes: 50 megapixels at 4:2:0 with 16-bit samples,
    /// or at 4:4:4 with 8-bit ones (a 50-megapixel 4:4:4 10-bit clip, 300 MB a picture, peaked
    /// at 1.3 GB).
    static constexpr int64_t kMaxPictureBytes = 160ll << 20;
    /// Pictures larger than this are decoded with slice threads only: frame threads each hold
    /// pictures of their own (a 16384x3050 4:2:0 clip peaked at 1.2 GB with them, 0.63 GB without).
    static constexpr int64_t kSliceThreadsPictureBytes = 24ll << 20;

private:
    std::atomic<int> skipped_{0};  // read from another thread than the decoding one
    AVFormatContext *format_ = nullptr;
    AVCodecContext *codec_ = nullptr;
    AVPacket *packet_ = nullptr;
    int stream_ = -1;
    bool draining_ = false;
    bool finished_ = false;
    double time_base_ = 0;   // seconds per timestamp unit
    int64_t start_ = 0;      // the stream's start time, timestamp units
};

}  // namespace ft
