import FaceTracking

/// Frames of one input, a video file or a still image, with their presentation timestamps.
/// A still image is one frame at time 0.
public final class FrameSource {
    /// What kind of file the input is.
    public enum Kind: String, Sendable {
        case video, image
    }

    /// The file path.
    public let path: String
    public let kind: Kind
    /// Upright frame size in pixels.
    public let width: Int
    public let height: Int
    /// The video's stream properties (nil for an image).
    public let videoInfo: VideoInfo?

    private let reader: VideoReader?

    /// Pictures the decoder skipped: damaged packets, and pictures over the frame limits
    /// (refused from their header before decoding). 0 for an image.
    public var skippedPictures: Int { reader?.skippedPictures ?? 0 }
    private var still: Image?
    private var index = 0

    /// Opens `path`: an image when its first bytes say so, otherwise a video.
    public init(path: String) throws(InputError) {
        self.path = path
        do {
            if Image.isImageFile(path) {
                let image = try Image(contentsOfFile: path)
                kind = .image
                still = image
                reader = nil
                videoInfo = nil
                width = image.width
                height = image.height
            } else {
                let reader = try VideoReader(path: path)
                kind = .video
                self.reader = reader
                videoInfo = reader.info
                width = reader.info.width
                height = reader.info.height
            }
        } catch {
            throw InputError(path: path, error)
        }
    }

    /// Decodes the next frame into `frame` and returns its presentation timestamp in
    /// microseconds on the input's clock, or nil when the input has no more frames.
    public func next(into frame: Image) throws(InputError) -> Int64? {
        defer { index += 1 }
        if kind == .image {
            guard index == 0, let still else { return nil }
            still.copy(into: frame)
            self.still = nil
            return 0
        }
        do {
            guard let milliseconds = try reader!.read(into: frame) else { return nil }
            return Int64((milliseconds * 1000).rounded())
        } catch {
            throw InputError(path: path, error)
        }
    }
}
