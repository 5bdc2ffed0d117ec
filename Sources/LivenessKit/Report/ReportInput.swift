import FaceTracking
import LivenessCore

/// What a report says about its input: the `input` object of `liveness-report/1`.
///
/// Fields a front end cannot know are `nil` and encoded as JSON `null`.
public struct ReportInput: Sendable, Equatable, Codable {
    /// The kind of input a report was made from.
    public enum Kind: String, Sendable, Codable {
        /// A video file, decoded frame by frame.
        case video
        /// A still image: one frame at time 0.
        case image
        /// A face-tracking trace (`liveness replay`): no pixels, no stills.
        case trace
        /// Frames pushed by a camera client (`StreamSession`, `liveness serve`).
        case stream
    }

    /// The input file's path as given on the command line (a name that is not UTF-8 with its
    /// bad bytes written `\xNN`; ForeignNames).
    public var path: String
    /// What kind of input it is.
    public var kind: Kind
    /// Upright frame width in pixels, if known.
    @NullWhenAbsent public var width: Int?
    /// Upright frame height in pixels, if known.
    @NullWhenAbsent public var height: Int?
    /// Frames per second: the container's nominal rate for a video; for a trace the mean rate of
    /// its timestamps, `(frames − 1) / durationSeconds`; `nil` when unknown or for an image.
    @NullWhenAbsent public var fps: Double?
    /// Frames in the input: decoded (video, image) or records (trace), after-verdict frames
    /// included when they were read; `nil` when unknown.
    @NullWhenAbsent public var frames: Int?
    /// Duration in seconds: the container's for a video; for a trace the last frame's timestamp
    /// minus the first's; `nil` when unknown.
    @NullWhenAbsent public var durationSeconds: Double?
    /// Clockwise rotation applied to make a video's frames upright, from the stream's display
    /// matrix as FFmpeg's player applies it (0, 90, 180 or 270 degrees; any angle in 0…359 for an
    /// unusual matrix); `nil` for images and traces.
    @NullWhenAbsent public var rotationDegrees: Int?
    /// True when the video's display matrix also mirrors the picture (undone before analysis);
    /// `nil` for images and traces.
    @NullWhenAbsent public var mirrored: Bool?
    /// Width:height of one stored pixel of a video (1 for square pixels; an anamorphic video is
    /// stretched to square pixels before analysis, as a player shows it); `nil` for images and traces.
    @NullWhenAbsent public var sampleAspectRatio: Double?

    /// Creates an input description; every measured field defaults to unknown.
    public init(path: String, kind: Kind, width: Int? = nil, height: Int? = nil, fps: Double? = nil,
                frames: Int? = nil, durationSeconds: Double? = nil, rotationDegrees: Int? = nil,
                mirrored: Bool? = nil, sampleAspectRatio: Double? = nil) {
        self.path = ForeignNames.shown(path)
        self.kind = kind
        self.width = width
        self.height = height
        self.fps = fps
        self.frames = frames
        self.durationSeconds = durationSeconds
        self.rotationDegrees = rotationDegrees
        self.mirrored = mirrored
        self.sampleAspectRatio = sampleAspectRatio
    }

    /// The description of a decoded video or image.
    /// - Parameters:
    ///   - source: the opened input (its size, kind and container properties are used).
    ///   - framesDecoded: frames actually decoded; used when the container does not say how many
    ///     frames it holds. (Decoding stops at the verdict, so this is usually fewer than the
    ///     video has; `frames.read` in the report counts them.)
    public init(source: FrameSource, framesDecoded: Int) {
        switch source.kind {
        case .video:
            let info = source.videoInfo
            self.init(path: source.path, kind: .video, width: source.width, height: source.height,
                      fps: info.flatMap { $0.framesPerSecond > 0 ? $0.framesPerSecond : nil },
                      frames: info.flatMap { $0.frameCount > 0 ? $0.frameCount : nil } ?? framesDecoded,
                      durationSeconds: info.flatMap { $0.durationSeconds > 0 ? $0.durationSeconds : nil },
                      rotationDegrees: info?.rotationDegrees, mirrored: info?.mirrored,
                      sampleAspectRatio: info?.sampleAspectRatio)
        case .image:
            self.init(path: source.path, kind: .image, width: source.width, height: source.height,
                      frames: framesDecoded)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case path, kind, width, height, fps, frames, durationSeconds, rotationDegrees, mirrored, sampleAspectRatio
    }
}

