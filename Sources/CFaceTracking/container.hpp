// The container probe (libavformat), internal to the shim. Never included by Swift.
#pragma once
#include "internal.hpp"

#include <cstdint>

namespace ft {

/// How to turn a stored frame upright, as FFmpeg's player does for the stream's display matrix.
struct Orientation {
    enum Op {
        None,
        RotateClockwise,         // transpose=clock
        RotateCounterClockwise,  // transpose=cclock
        Rotate180,               // hflip + vflip
        Transpose,               // transpose=cclock_flip (mirror about the main diagonal)
        AntiTranspose,           // transpose=clock_flip (mirror about the other diagonal)
        FlipHorizontal,          // hflip
        FlipVertical,            // vflip
        Arbitrary                // rotate by theta_degrees, same frame size (FFmpeg's rotate filter)
    };
    Op op = None;
    /// The display rotation FFmpeg computes: -av_display_rotation_get, in [0, 360).
    double theta_degrees = 0;
    /// Clockwise rotation applied, degrees (0, 90, 180, 270; any angle for Arbitrary).
    int clockwise_degrees() const;
    /// True when the matrix mirrors the picture as well.
    bool mirrored() const;
    /// True when the upright frame's width is the stored height.
    bool swaps_sides() const;
};

/// What the container says about its best video stream.
struct ContainerInfo {
    int stream_index = -1;                    // the video stream a player shows (FFmpeg's best stream)
    int stored_width = 0, stored_height = 0;  // coded size, before the display matrix
    double frames_per_second = 0;             // average frame rate the container declares; 0 unknown
    int64_t frame_count = 0;                  // frames the container declares; 0 unknown
    double duration_seconds = 0;              // declared duration; 0 unknown
    Orientation orientation;
    double sample_aspect = 1;                 // width:height of one stored pixel (1: square; FFmpeg's guess)
    int packets_seen = 0;                     // video packets read to check timestamps
    bool timestamps_missing = false;          // the first packets carry no timestamp, or all the same one
};

/// Reads the header and the first video packets of `path` (libavformat). FT_ERR_UNSUPPORTED
/// with a message for a file that is not a video (no video stream, unknown format).
ft_status probe_container(const char *path, ContainerInfo &info, ft_error *error);

/// Silences FFmpeg's and OpenCV's own logging (once per process, and again after OpenCV
/// re-initialises its FFmpeg backend, which writes annotated videos). Called before every decode.
void configure_libraries();

}  // namespace ft
