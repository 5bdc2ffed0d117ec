/*
 * face_tracking.h — the C boundary of the liveness engine over OpenCV 4.6 and dlib 19.24.
 *
 * Every function has the prefix `ft_`. No C++ type or exception crosses this header: each
 * call catches everything and returns an `ft_status`, with a readable message in the
 * caller's `ft_error` when it is not FT_OK. Frames are borrowed for the duration of a call;
 * results come back in caller-owned plain structs. Handles are opaque and freed by their
 * `_free`/`_close` function.
 *
 * Coordinate conventions: pixels with the origin at the top left of the (upright) frame;
 * normalised coordinates are pixels divided by the frame width/height. "left" and "right"
 * are the subject's own (the subject's left eye is on the image's right in an unmirrored
 * camera image). Angles in degrees. Times in milliseconds unless a name says otherwise.
 */
#ifndef FACE_TRACKING_H
#define FACE_TRACKING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Result of every fallible call. */
typedef enum ft_status {
    FT_OK = 0,
    FT_END_OF_STREAM = 1,      /**< no more frames (not an error) */
    FT_ERR_NOT_FOUND = 2,      /**< the file does not exist or cannot be read */
    FT_ERR_UNSUPPORTED = 3,    /**< the file is not a video/image this build can decode */
    FT_ERR_DECODE = 4,         /**< the data is corrupt or truncated */
    FT_ERR_ARGUMENT = 5,       /**< a bad argument (size, format, null) */
    FT_ERR_MODEL = 6,          /**< the landmark model could not be loaded */
    FT_ERR_ENCODE = 7,         /**< encoding or writing an output failed */
    FT_ERR_INTERNAL = 8,       /**< an unexpected exception inside OpenCV or dlib */
    FT_ERR_LIMIT = 9           /**< the input exceeds a resource limit (see ft_limits) */
} ft_status;

/**
 * Resource limits applied to every image and video before its pixels are decoded (fixed for
 * the process). A 4K phone video is 8.3 megapixels a frame, an 8K one
 * 33.2, a 48-megapixel phone photo 48.
 */
typedef struct ft_limits {
    int64_t max_frame_pixels;   /**< largest frame or image, width x height pixels (50,000,000) */
    int max_frame_side;         /**< largest width or height, pixels (16384) */
} ft_limits;

/** The limits in force. */
ft_limits ft_limits_get(void);

/** A human-readable message filled in when a call fails. */
typedef struct ft_error {
    char message[512];
} ft_error;

/* ------------------------------------------------------------------ images */

/** An owned BGR 8-bit image (a cv::Mat inside). */
typedef struct ft_image ft_image;

/** Pixel layouts accepted by ft_image_from_pixels. */
typedef enum ft_pixel_format {
    FT_PIXELS_BGR = 0,
    FT_PIXELS_RGB = 1,
    FT_PIXELS_GRAY = 2,
    FT_PIXELS_BGRA = 3,
    FT_PIXELS_RGBA = 4,
    FT_PIXELS_NV12 = 5,  /**< Y plane (rows `stride` bytes apart), then interleaved U/V at half height; even sizes */
    FT_PIXELS_I420 = 6   /**< Y plane, then U and V planes at half width and height, tightly packed (stride = width); even sizes */
} ft_pixel_format;

/** A new empty image; fill it with one of the calls below. Never NULL unless out of memory. */
ft_image *ft_image_new(void);
void ft_image_free(ft_image *image);
int ft_image_width(const ft_image *image);
int ft_image_height(const ft_image *image);
/** Channels of the pixels without converting anything: 3 (BGR, or a decoded picture), 1 (grey), 0 when empty. */
int ft_image_channels(const ft_image *image);
/**
 * The image's BGR bytes, borrowed: valid until the image is next changed or freed. `stride`
 * receives the bytes between rows. NULL for an empty image.
 */
const uint8_t *ft_image_bytes(const ft_image *image, size_t *stride);
/**
 * The I420 bytes of a decoded video frame (Y, then U, then V, tightly packed; width x height x
 * 3 / 2 bytes into `out`) when it still shows its decoded picture and that picture is 8-bit
 * 4:2:0, limited range, of even size, upright with square pixels: the lossless form of the
 * frame for a stream (`ft_image_from_pixels` with FT_PIXELS_I420 makes the same frame of them:
 * the same grey frame; its colour, converted as BT.601, differs slightly for a BT.709 picture).
 * FT_ERR_UNSUPPORTED otherwise.
 */
ft_status ft_image_i420(const ft_image *image, uint8_t *out, size_t capacity, ft_error *error);
/**
 * Copy of `source` into `destination`. A decoded video frame's copy shares its decoded picture
 * (converted to BGR only if read, the same luma for its grey copy); any other copy is deep.
 */
ft_status ft_image_copy(const ft_image *source, ft_image *destination, ft_error *error);
/** A solid image of the given size and colour (0..255 per channel). */
ft_status ft_image_fill(ft_image *image, int width, int height, int blue, int green, int red, ft_error *error);
/** Decodes a JPEG/PNG/BMP/... file (cv::imread, EXIF orientation applied). */
ft_status ft_image_decode_file(const char *path, ft_image *out, ft_error *error);
/** Decodes an encoded image held in memory (cv::imdecode). */
ft_status ft_image_decode_bytes(const uint8_t *bytes, size_t count, ft_image *out, ft_error *error);
/**
 * The stored width and height of an encoded JPEG or PNG, read from its header without decoding
 * any pixel (before an EXIF orientation turns it). FT_ERR_UNSUPPORTED for another format,
 * FT_ERR_DECODE for a header that cannot be read.
 */
ft_status ft_image_encoded_size(const uint8_t *bytes, size_t count, int *width, int *height, ft_error *error);
/**
 * Copies raw pixels (rows `stride` bytes apart) into `out` as BGR. NV12 and I420 frames are kept
 * as YUV, limited range, BT.601 (what camera APIs deliver): their grey copy is the Y plane
 * (`ft_image_to_gray`, as for a decoded video frame) and their BGR pixels are converted with
 * libswscale when first read, as ffmpeg converts them to bgr24.
 */
ft_status ft_image_from_pixels(const uint8_t *pixels, int width, int height, int stride,
                               ft_pixel_format format, ft_image *out, ft_error *error);
/** True (1) when the file's first bytes are those of an image format OpenCV reads. */
int ft_file_is_image(const char *path);

/** A malloc'd byte buffer returned by the encoders; free with ft_buffer_free. */
typedef struct ft_buffer {
    uint8_t *bytes;
    size_t count;
} ft_buffer;
void ft_buffer_free(ft_buffer *buffer);
/** JPEG-encodes the image (quality 0..100) into a new buffer (cv::imencode). */
ft_status ft_image_encode_jpeg(const ft_image *image, int quality, ft_buffer *out, ft_error *error);
/** PNG-encodes the image into a new buffer (cv::imencode). */
ft_status ft_image_encode_png(const ft_image *image, ft_buffer *out, ft_error *error);
/** Turns the image clockwise by 0, 90, 180 or 270 degrees in place (cv::rotate). */
ft_status ft_image_rotate(ft_image *image, int clockwise_degrees, ft_error *error);
/** Mirrors the image left-right in place (cv::flip). */
ft_status ft_image_flip_horizontal(ft_image *image, ft_error *error);
/** Resizes in place by a factor (area interpolation when shrinking). */
ft_status ft_image_scale(ft_image *image, double factor, ft_error *error);
/**
 * A grey thumbnail of `width` x `height` pixels (at most 1024 each) of the region x,y,w,h
 * (pixels, clipped to the image; the whole image when w <= 0), area-averaged (cv::resize with
 * INTER_AREA): the picture the frozen and repeated-input checks compare. From a grey copy made by
 * `ft_image_to_gray`, it averages the smallest of its reductions that still holds the region at
 * twice the thumbnail's size (whose grid may start up to 2^k - 1 pixels before the region); from
 * any other image, the region is trimmed by less than one thumbnail pixel to a whole number of
 * pixels per thumbnail pixel and a colour result converted with cv::cvtColor.
 */
ft_status ft_image_thumbnail(const ft_image *source, double x, double y, double w, double h, int width, int height,
                             ft_image *out, ft_error *error);
/**
 * A grey copy of `source` written into `out`, whose buffer is reused when
 * the size matches: a frame's grey image made once and handed to the tracker
 * (`FaceTracker.process(_:gray:timestampMilliseconds:)`) and the rotation estimate (`ft_image_reduce_gray`), which would
 * otherwise each convert the frame. A decoded video frame's grey copy is its luma plane, as
 * ffmpeg converts to gray (its colour is not converted); a BGR image's is cv::cvtColor's; a
 * grey `source` is copied. `out` also keeps its reductions
 * by 2, 4, 8, ... (area averages, about 0.07 ms at 720p), from which `ft_image_thumbnail`,
 * `ft_image_reduce_gray` and the tracker's detection scans of a large face reduce it instead of
 * averaging the whole-resolution pixels again; any later change to `out`'s pixels drops them.
 */
ft_status ft_image_to_gray(const ft_image *source, ft_image *out, ft_error *error);
/** Mean brightness 0..255 and sharpness (variance of the Laplacian) inside a box, or the whole frame when w <= 0. */
ft_status ft_image_quality(const ft_image *image, double x, double y, double w, double h,
                           double *brightness, double *sharpness, ft_error *error);

/* ----------------------------------------------------------------- drawing */

/** Colours are blue, green, red 0..255; thickness in pixels (-1 fills). */
void ft_draw_circle(ft_image *image, double cx, double cy, double radius, int blue, int green, int red, int thickness);
void ft_draw_line(ft_image *image, double x0, double y0, double x1, double y1, int blue, int green, int red, int thickness);
void ft_draw_rect(ft_image *image, double x, double y, double w, double h, int blue, int green, int red, int thickness);
/** Draws `count` points (x,y pairs) as small dots. */
void ft_draw_points(ft_image *image, const float *xy, int count, double radius, int blue, int green, int red);
/** Draws an open polyline through `count` points (x,y pairs), anti-aliased. */
void ft_draw_polyline(ft_image *image, const float *xy, int count, int blue, int green, int red, int thickness);
/** Draws ASCII text with its baseline-left corner at (x, y); `scale` 1.0 is about 22 px tall. */
void ft_draw_text(ft_image *image, const char *text, double x, double y, double scale, int blue, int green, int red, int thickness);

/* ------------------------------------------------------------------ videos */

typedef struct ft_video ft_video;

/** What the container says about a video stream. */
typedef struct ft_video_info {
    int width;                 /**< upright frame width in pixels (after rotation) */
    int height;                /**< upright frame height in pixels (after rotation) */
    double fps;                /**< average frame rate the container declares (frames per second); 0 if unknown */
    int64_t frame_count;       /**< frames the container claims; may be wrong for truncated files */
    int rotation_degrees;      /**< clockwise rotation applied to make frames upright (0, 90, 180, 270; any angle
                                    for an unusual display matrix), as FFmpeg's player applies it */
    int mirrored;              /**< 1 when the display matrix also mirrors the picture (undone, as FFmpeg does) */
    double duration_seconds;   /**< declared duration, seconds; 0 if unknown */
    int stored_width;          /**< coded width before the display matrix, pixels */
    int stored_height;         /**< coded height before the display matrix, pixels */
    double sample_aspect_ratio; /**< width:height of one stored pixel (1: square); other values are
                                     stretched to square pixels (one side enlarged) before the display
                                     matrix, as a player shows them; only 1/4 to 4 is accepted */
} ft_video_info;

/**
 * Opens a video file: the container is probed with libavformat (video stream, size against
 * ft_limits, display matrix, timestamps), then the stream a player shows (FFmpeg's best video
 * stream, whichever its position) is decoded with libavcodec on one thread per core. Frames
 * are turned upright from the display matrix the way FFmpeg's own player does, and non-square
 * pixels are stretched square. FT_ERR_LIMIT for a frame larger than the limits, FT_ERR_DECODE
 * for a stream whose packets carry no timestamps.
 */
ft_status ft_video_open(const char *path, ft_video **out, ft_video_info *info, ft_error *error);
/**
 * Decodes the next frame into `frame`; `timestamp_ms` receives its presentation timestamp in
 * milliseconds from the stream's start time (the decoder's best-effort timestamp, as ffprobe
 * reports it). Returns FT_END_OF_STREAM when no frame is left: a truncated file simply ends
 * early, and damaged packets are skipped as a player skips them. A frame without a timestamp
 * gets the previous one plus a nominal frame interval; more than 48 such frames in a row are
 * FT_ERR_DECODE (a stream whose timestamps stop). FT_ERR_LIMIT for a frame beyond the limits
 * (a stream may change size midway).
 *
 * The frame keeps the decoded picture: its pixels are converted to BGR (libswscale, the
 * picture's own colour matrix and range, as ffmpeg converts to bgr24) only when first read, and
 * `ft_image_to_gray` takes the grey frame from the luma plane (as ffmpeg converts to gray), so
 * a frame that is only tracked is never converted to colour.
 */
ft_status ft_video_read(ft_video *video, ft_image *frame, double *timestamp_ms, ft_error *error);
/** Pictures skipped so far: damaged packets, and pictures over the frame limits (refused by the
 *  decoder from their header, before their pixels are decoded). */
int ft_video_skipped_pictures(const ft_video *video);
void ft_video_close(ft_video *video);

typedef struct ft_video_writer ft_video_writer;
/** Opens an MP4 (mp4v) or AVI (MJPG) writer, chosen from the path's extension. */
ft_status ft_video_writer_open(const char *path, double fps, int width, int height, ft_video_writer **out, ft_error *error);
ft_status ft_video_writer_write(ft_video_writer *writer, const ft_image *frame, ft_error *error);
void ft_video_writer_close(ft_video_writer *writer);

/* ------------------------------------------------------- faces: model, detector, landmarks */

/** dlib's HOG frontal face detector and its 68-point landmark model (the shape predictor). */
typedef struct ft_model ft_model;
/**
 * Loads the shape predictor at `path` (dlib's serialisation, 68 points) and the HOG frontal face
 * detector (decompressed from dlib's library): about 0.7 s and 100 MB. Each call loads anew: the
 * caller keeps the model while detectors and fits use it, and frees it with `ft_model_free`. A
 * loaded model is only read, so threads may share it. FT_ERR_MODEL for a missing or bad file.
 */
ft_status ft_model_load(const char *path, ft_model **out, ft_error *error);
/** Frees a model; no detector made from it may be used afterwards. Null is ignored. */
void ft_model_free(ft_model *model);

/** The number of filters in the HOG detector (dlib's frontal face detector has five: a face looking
 *  ahead, to either side, and tilted either way). */
int ft_detector_filter_count(const ft_model *model);

/** One detected face, in frame pixels. */
typedef struct ft_candidate {
    double x, y, w, h;
    double score;   /**< HOG detection score; higher is more face-like (real faces: about 0 to 3) */
    int filter;     /**< the detector filter that found it, 0 ..< ft_detector_filter_count */
} ft_candidate;

enum { FT_LANDMARKS = 68 };

/**
 * A HOG face detector for one stream of frames: the model's filters with their own scanning
 * buffers. Not thread-safe; one per stream (the model it was made from must outlive it).
 */
typedef struct ft_detector ft_detector;
ft_status ft_detector_new(const ft_model *model, ft_detector **out, ft_error *error);
void ft_detector_free(ft_detector *detector);

/**
 * The faces in the region (x, y, w, h pixels; clipped to the image) of `image` scaled by `scale`
 * (0.05...4; HOG finds faces of 80 px and more in the scanned image), all the detector's filters
 * run at once on the cores over one HOG pyramid and their detections suppressed as dlib's
 * object_detector does: dlib's detections and scores, in frame pixels, best first.
 * `image`: a grey frame made by `ft_image_to_gray` (its reductions by 2, 4, ... then make the
 * scaling cheaper) or a BGR image (converted first).
 * `search`: 1 for a search for a face not yet tracked, whose reduction is bilinear from the
 * smallest reduction still at least the scanned size (cheaper; the detections may differ slightly
 * from those of the area reduction used otherwise).
 * `pyramid_levels`: 0 scans the whole pyramid; n > 0 only its first n levels (the largest
 * scanned images: the smallest faces).
 * `out` receives up to `capacity` candidates and `count` how many there are (possibly more than
 * `capacity`). A region smaller than a HOG window once scaled finds nothing.
 */
ft_status ft_detector_scan(ft_detector *detector, const ft_image *image, int x, int y, int w, int h, double scale,
                           double threshold, int search, int pyramid_levels, ft_candidate *out, int capacity, int *count,
                           ft_error *error);

/**
 * Filter by filter: loads the region (x, y, w, h pixels, clipped) of `image` scaled by `scale`
 * (area reduction, as `ft_detector_scan` without `search`) into the detector's HOG pyramid and
 * forgets earlier filters' detections; `loaded` receives 0 when the region is smaller than a HOG
 * window once scaled (no filter can then run).
 */
ft_status ft_detector_load(ft_detector *detector, const ft_image *image, int x, int y, int w, int h, double scale,
                           int *loaded, ft_error *error);
/** Runs filter `filter` over the loaded region, adding its detections to those of the filters run
 *  on it so far. FT_ERR_ARGUMENT when no region is loaded (a scan since replaces it). */
ft_status ft_detector_run_filter(ft_detector *detector, int filter, double threshold, ft_error *error);
/**
 * The detections of the filters run on the loaded region so far, suppressed as dlib's
 * object_detector does (best first, then each that overlaps none kept), in frame pixels: with all
 * the filters run, the detections `ft_detector_scan` gives. Up to `capacity` into `out`, `count`
 * how many there are.
 */
ft_status ft_detector_suppressed(ft_detector *detector, ft_candidate *out, int capacity, int *count, ft_error *error);

/**
 * Fits the 68 landmarks in a box (x, y, w, h pixels) of `frame` (BGR, or its grey copy, read in
 * place) with the shape predictor; `xy` receives 136 values (x0, y0, x1, y1, ...), pixels.
 */
ft_status ft_fit_landmarks(const ft_model *model, const ft_image *frame, double x, double y, double w, double h,
                           double *xy, ft_error *error);


/**
 * Head pose from the 68 landmarks (solvePnP, SQPnP, of the rigid points against a generic face;
 * focal length = the frame's longer side in pixels, principal point at the frame's centre).
 * Two yaws, both positive when the subject turns to their own left:
 * - `yaw_degrees`: the face's forward axis against the camera's optical axis. It changes when
 *   the camera rotates or the face's image moves across the frame, with no head rotation.
 * - `line_of_sight_yaw_degrees`: the face's forward axis against the line from the head's
 *   turning point (on the midline, 100 mm behind the nose tip) to the camera centre. A camera
 *   rotating about its centre leaves it unchanged; a head turning about that point changes it
 *   by the turn.
 * Pitch (> 0: looking up) and roll (> 0: tilting towards the left shoulder) are against the
 * camera's axes.
 */
typedef struct ft_pose {
    double yaw_degrees;
    double line_of_sight_yaw_degrees;
    double pitch_degrees;
    double roll_degrees;
    double error_px;                   /**< RMS reprojection error of the fit, pixels */
} ft_pose;

/**
 * The head pose of one face from its 68 landmarks (`landmarks`: x0,y0,x1,y1,... pixels) in a
 * frame of `width` x `height` pixels. FT_ERR_ARGUMENT for a null pointer, a non-positive size
 * or non-finite landmarks; FT_ERR_DECODE when no pose fits (the face would lie behind the camera).
 */
ft_status ft_estimate_pose(const double *landmarks, int width, int height, ft_pose *out, ft_error *error);

/**
 * How far `count` points (`points`: x0,y0,x1,y1,... pixels) are from being the image of
 * `reference` (the same `count` points on another frame) under one plane-to-plane mapping: a
 * homography is fitted robustly (OpenCV findHomography, least median of squares, then refined
 * on its inliers) and `errors` (count values, caller-owned) receives each point's distance in
 * pixels from where the homography puts its reference point. A flat picture, however it is
 * tilted or moved, gives errors at the level of landmark noise; a turning head does not.
 * FT_ERR_ARGUMENT for null pointers, fewer than 8 or more than 10000 points or non-finite
 * coordinates; FT_ERR_DECODE when no homography fits (degenerate points).
 */
ft_status ft_planar_residual(const double *reference, const double *points, int count, double *errors, ft_error *error);

/** The strongest straight step edge found on one side of a face (see `ft_face_enclosure`). */
typedef struct ft_border_side {
    double contrast;              /**< mean step across the line, grey levels (0 when none was measured) */
    double consistency;           /**< share (0..1) of the line's samples whose step has the mean's sign and
                                       at least 0.3 of its size: ~1 for a border, low for texture */
    double distance_face_widths;  /**< distance of the line from the face centre, face widths */
    double tilt_degrees;          /**< the line's tilt from the face's own axes, degrees */
} ft_border_side;

/** A face's surroundings: the best border line on each side, in the face's roll-corrected frame. */
typedef struct ft_enclosure {
    ft_border_side image_left;    /**< beside the face on the image's left, 0.6-2.6 face widths out */
    ft_border_side image_right;   /**< beside the face on the image's right */
    ft_border_side above;         /**< above the face, 0.75-2.6 face widths over its centre */
    ft_border_side below;         /**< below the chin, 1.0-3.2 face widths under the centre, across the neck */
} ft_enclosure;

/**
 * Looks for the border of a screen or a print around a face: on each side of the face (centre
 * `cx`,`cy` pixels, width `face_width` pixels, `eye_line_degrees`: the angle of the line from the
 * image-left eye centre to the image-right one, positive clockwise as y points down), the straight line, within
 * 8 degrees of the face's own axes, with the strongest consistent step in brightness across it
 * (contrast times consistency). Works on the grey frame scaled so the face is 32 px wide (from its
 * reductions by 2, 4, ... when `gray` is a frame's grey copy; a BGR image is converted first).
 * Lines that reach the picture's edge, or a flat padding band along it (letterboxing: rows or
 * columns spanning at most 6 grey levels), are not measured: a picture's own edge is no border.
 * FT_ERR_ARGUMENT for a null pointer, an empty image, a face narrower than 8 px or non-finite values.
 */
ft_status ft_face_enclosure(const ft_image *gray, double cx, double cy, double face_width, double eye_line_degrees,
                            ft_enclosure *out, ft_error *error);

/**
 * How much of the edge energy around each eye runs vertically (0...1): the eye's patch, its
 * corners (landmarks 36/39 and 42/45 of `landmarks`, 68 x/y pairs in pixels of `gray`) levelled,
 * 1.4 eye widths across and 0.7 down, sampled to 48 x 24 pixels; then sum |d/dx| / (sum |d/dx| +
 * sum |d/dy|) of its 3x3 Sobel derivatives over the inner 32 x 16 pixels. An open eye's iris
 * gives vertical edges, a closed eye's lash line a horizontal one. `left` is the subject's left
 * eye (landmarks 42-47). -1 for an eye whose corners are under 6 px apart. FT_ERR_ARGUMENT for a
 * null pointer, a non-finite eye landmark or an image that is not grey.
 */
ft_status ft_eye_edges(const ft_image *gray, const double *landmarks, double *left, double *right, ft_error *error);


/** What one face's 68 landmarks measure (`ft_measure_face`). */
typedef struct ft_face_measures {
    double center_x, center_y;         /**< face anchor (mean of nose bridge and eye corners), normalised 0...1 */
    double ear_left, ear_right;        /**< eye aspect ratios, the subject's left/right eye */
    double eye_distance_px;            /**< distance between the two eye centres, pixels */
    int pose_valid;                    /**< 0 when no head pose fits (then `pose` is zeros) */
    ft_pose pose;                      /**< head pose against the camera's picture area (see ft_pose) */
} ft_face_measures;

/**
 * Measures the face whose 68 landmarks are `landmarks` (x0, y0, ... pixels) on `image` (the
 * frame's grey copy, or BGR): anchor, eye aspect ratios, eye distance and head pose. The pose's
 * camera is the frame's picture area (the frame less flat padding bands, letterboxing): `picture`
 * (x, y, w, h pixels) gives the area found on an earlier frame of the stream (zeros: none), which
 * is checked on its boundary lines and found again only when it no longer holds; it receives this
 * frame's. FT_ERR_ARGUMENT for null pointers, an empty image or non-finite landmarks.
 */
ft_status ft_measure_face(const ft_image *image, const double *landmarks, int picture[4], ft_face_measures *out,
                          ft_error *error);

/**
 * How this shim was built and which code it runs, for `liveness --version` and the benchmarks:
 * `optimised` is 0 when its C++ was compiled without optimisation (a debug build without
 * `-Xcxx -O2`: dlib's templates then run about 150x slower), 1 otherwise. `simd` names the HOG
 * detector's code path on this CPU: "avx2" (AVX2 and FMA) or "baseline" (x86-64 SSE2, or
 * another architecture's); LIVENESS_SIMD=baseline in the environment forces "baseline".
 */
typedef struct ft_build_info {
    int optimised;
    const char *simd;
} ft_build_info;
ft_build_info ft_build(void);


/* ------------------------------------------------------------ optical flow */

/** Global motion of the image outside an excluded box, between two frames. */
typedef struct ft_motion {
    int valid;                /**< 0 when there was too little texture to tell */
    int points;               /**< tracked background points used in the fit */
    int inliers;              /**< points consistent with the fitted motion */
    double dx, dy;            /**< translation, pixels */
    double rotation_degrees;  /**< in-plane rotation */
    double scale;             /**< scale change (1 = none) */
} ft_motion;

/**
 * Reduces `source` to a grey copy whose longer side is at most `max_side` pixels (area
 * interpolation; from a grey copy made by `ft_image_to_gray`, bilinear from the smallest of its
 * reductions still at least that size), for `ft_background_motion`; `scale` receives the
 * factor applied (<= 1).
 */
ft_status ft_image_reduce_gray(const ft_image *source, int max_side, ft_image *out, double *scale, ft_error *error);

/**
 * Estimates background motion from `previous` to `current` with sparse Lucas–Kanade optical
 * flow on corners outside the box (x,y,w,h pixels, ignored when w <= 0), robust similarity fit
 * (RANSAC). Works on a downscaled grey copy of at most `max_side` pixels.
 */
ft_status ft_background_motion(const ft_image *previous, const ft_image *current,
                               double x, double y, double w, double h, int max_side,
                               ft_motion *out, ft_error *error);

/**
 * The same on two images already reduced by `ft_image_reduce_gray` with factor `scale`; the box
 * and the results are in the original frame's pixels. The cheap path for a video: each frame
 * is reduced once and kept as the next call's `previous`.
 */
ft_status ft_background_motion_reduced(const ft_image *previous, const ft_image *current, double scale,
                                       double x, double y, double w, double h, ft_motion *out, ft_error *error);

#ifdef __cplusplus
}
#endif

#endif /* FACE_TRACKING_H */
