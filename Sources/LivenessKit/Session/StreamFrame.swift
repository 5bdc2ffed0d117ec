import FaceTracking

/// One frame pushed into a `StreamSession`, as a camera service has it.
///
/// The bytes are borrowed for the duration of `push`: the session decodes or converts them into
/// its own buffer and never keeps a reference.
public struct StreamFrame {
    /// How the frame's bytes are laid out.
    public enum Content {
        /// Raw pixels: `format`, `width`×`height`, rows `bytesPerRow` apart.
        case pixels(UnsafeRawBufferPointer, format: Image.PixelFormat, width: Int, height: Int, bytesPerRow: Int)
        /// An encoded JPEG or PNG still.
        case encoded(UnsafeRawBufferPointer)
    }

    /// The frame's bytes.
    public var content: Content
    /// Capture time in microseconds on the client's monotonic clock; must increase strictly from
    /// frame to frame (time comes from the frames, never from the server's clock).
    public var timestampMicroseconds: Int64
    /// Clockwise rotation, degrees (0, 90, 180, 270), that turns the frame upright: a phone sending
    /// its sensor's frames says how it is held.
    public var rotationDegrees: Int
    /// Gyroscope samples taken since the previous frame (optional; see `MotionSample`).
    public var motion: [MotionSample]

    /// Creates a frame.
    public init(content: Content, timestampMicroseconds: Int64, rotationDegrees: Int = 0, motion: [MotionSample] = []) {
        self.content = content
        self.timestampMicroseconds = timestampMicroseconds
        self.rotationDegrees = rotationDegrees
        self.motion = motion
    }
}

/// One gyroscope sample of a streaming device: rotation rate about its three axes.
public struct MotionSample: Sendable, Equatable, Codable {
    /// Time of the sample in microseconds, on the same clock as the frames' timestamps.
    public var timestampMicroseconds: Int64
    /// Rotation rate about the device's x, y and z axes, radians per second.
    public var x: Double, y: Double, z: Double

    /// Creates a sample.
    public init(timestampMicroseconds: Int64, x: Double, y: Double, z: Double) {
        self.timestampMicroseconds = timestampMicroseconds
        self.x = x
        self.y = y
        self.z = z
    }

    /// The angular speed |ω| in degrees per second.
    public var degreesPerSecond: Double { (x * x + y * y + z * z).squareRoot() * 180 / .pi }
}
