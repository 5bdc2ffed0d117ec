import CFaceTracking

/// What a video container says about its stream.
public struct VideoInfo: Sendable, Equatable {
    /// Upright frame width in pixels (rotation metadata applied).
    public var width: Int
    /// Upright frame height in pixels.
    public var height: Int
    /// Nominal frames per second; 0 when unknown. Phones record variable frame rate: use the
    /// frames' own timestamps, not this.
    public var framesPerSecond: Double
    /// Frames the container claims; a truncated file may deliver fewer.
    public var frameCount: Int
    /// Clockwise rotation applied to make frames upright, degrees: 0, 90, 180 or 270 (any angle
    /// for an unusual display matrix), as FFmpeg's player applies the stream's display matrix.
    public var rotationDegrees: Int
    /// True when the display matrix also mirrors the picture (undone, as FFmpeg's player does).
    public var mirrored: Bool
    /// Declared duration in seconds; 0 when unknown.
    public var durationSeconds: Double
    /// Width:height of one stored pixel: 1 for square pixels; an anamorphic video's frames are
    /// stretched to square pixels (one side enlarged) as a player shows them, and `width` and
    /// `height` are the stretched size.
    public var sampleAspectRatio: Double

    /// Creates stream properties.
    public init(width: Int, height: Int, framesPerSecond: Double, frameCount: Int, rotationDegrees: Int,
                mirrored: Bool = false, durationSeconds: Double, sampleAspectRatio: Double = 1) {
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.frameCount = frameCount
        self.rotationDegrees = rotationDegrees
        self.mirrored = mirrored
        self.durationSeconds = durationSeconds
        self.sampleAspectRatio = sampleAspectRatio
    }
}

/// Resource limits the shim applies to every image and video before decoding its pixels
/// (`ft_limits_get`).
public enum FrameLimits {
    /// Largest frame or image, pixels (width × height).
    public static var maxFramePixels: Int { Int(ft_limits_get().max_frame_pixels) }
    /// Largest width or height, pixels.
    public static var maxFrameSide: Int { Int(ft_limits_get().max_frame_side) }
}

/// Decodes a video file frame by frame with libavformat and libavcodec (`ft_video_open`,
/// `ft_video_read`): the stream a player shows, upright, with each frame's own presentation
/// timestamp. A frame keeps its decoded picture: its BGR pixels are converted only when read,
/// and its grey copy (`Image.gray(into:)`) is the luma plane, so tracking never converts
/// colour. Opening decodes the first frame, so a file that is not a decodable video
/// fails here with a clear error rather than later.
public final class VideoReader {
    private let handle: OpaquePointer
    /// The file path.
    public let path: String
    /// Stream properties.
    public let info: VideoInfo

    public init(path: String) throws(FaceTrackingError) {
        var error = ft_error()
        var info = ft_video_info()
        var handle: OpaquePointer?
        try check(ft_video_open(path, &handle, &info, &error), &error)
        guard let handle else { throw FaceTrackingError(kind: .internal, message: "\(path): no video handle") }
        self.handle = handle
        self.path = path
        self.info = VideoInfo(width: Int(info.width), height: Int(info.height), framesPerSecond: info.fps,
                              frameCount: Int(info.frame_count), rotationDegrees: Int(info.rotation_degrees),
                              mirrored: info.mirrored != 0, durationSeconds: info.duration_seconds,
                              sampleAspectRatio: info.sample_aspect_ratio > 0 ? info.sample_aspect_ratio : 1)
    }

    deinit { ft_video_close(handle) }

    /// Pictures skipped so far: damaged packets, and pictures over the frame limits (refused
    /// from their header before decoding). Read it once decoding is done.
    public var skippedPictures: Int { Int(ft_video_skipped_pictures(handle)) }

    /// Decodes the next frame into `frame` (reusing its buffer) and returns its presentation
    /// timestamp in milliseconds from the stream's start, or nil at the end of the stream (a
    /// truncated file simply ends early).
    public func read(into frame: Image) throws(FaceTrackingError) -> Double? {
        var error = ft_error()
        var milliseconds = 0.0
        let status = ft_video_read(handle, frame.handle, &milliseconds, &error)
        if status == FT_END_OF_STREAM { return nil }
        try check(status, &error)
        return milliseconds
    }
}

/// Writes frames to an MP4 (mp4v) or AVI (MJPG) file (`ft_video_writer_open`).
public final class VideoWriter {
    private var handle: OpaquePointer?

    /// Opens `path` for frames of `width`×`height` pixels at `framesPerSecond`.
    public init(path: String, framesPerSecond: Double, width: Int, height: Int) throws(FaceTrackingError) {
        var error = ft_error()
        var handle: OpaquePointer?
        try check(ft_video_writer_open(path, framesPerSecond, Int32(width), Int32(height), &handle, &error), &error)
        self.handle = handle
    }

    deinit { close() }

    /// Appends a frame (`ft_video_writer_write`); it must have the writer's size.
    public func write(_ frame: Image) throws(FaceTrackingError) {
        guard let handle else { throw FaceTrackingError(kind: .argument, message: "writer is closed") }
        var error = ft_error()
        try check(ft_video_writer_write(handle, frame.handle, &error), &error)
    }

    /// Finishes the file (`ft_video_writer_close`). Idempotent.
    public func close() {
        if let handle { ft_video_writer_close(handle) }
        handle = nil
    }
}
