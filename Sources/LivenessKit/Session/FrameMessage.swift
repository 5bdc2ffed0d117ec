import FaceTracking

/// The pixel layouts a binary frame message may carry (byte 16 of its header).
public enum FrameFormat: UInt8, Sendable, CaseIterable, Codable {
    case jpeg = 0, png = 1, bgr = 2, rgb = 3, rgba = 4, bgra = 5, gray = 6, nv12 = 7, i420 = 8

    /// The name used in documents and capabilities.
    public var name: String {
        switch self {
        case .jpeg: "jpeg"
        case .png: "png"
        case .bgr: "bgr"
        case .rgb: "rgb"
        case .rgba: "rgba"
        case .bgra: "bgra"
        case .gray: "gray"
        case .nv12: "nv12"
        case .i420: "i420"
        }
    }

    /// The raw layout, or nil for an encoded still (JPEG, PNG).
    public var pixelFormat: Image.PixelFormat? {
        switch self {
        case .jpeg, .png: nil
        case .bgr: .bgr
        case .rgb: .rgb
        case .rgba: .rgba
        case .bgra: .bgra
        case .gray: .gray
        case .nv12: .nv12
        case .i420: .i420
        }
    }
}

/// The 32-byte header of a binary frame message of `liveness-stream/1`, little-endian:
///
/// | offset | size | field |
/// | --- | --- | --- |
/// | 0 | 4 | magic `LVF1` |
/// | 4 | 4 | sequence number (uint32, chosen by the client, echoed in `seq`) |
/// | 8 | 8 | capture time, microseconds on the client's monotonic clock (int64) |
/// | 16 | 1 | pixel format (`FrameFormat`) |
/// | 17 | 1 | rotation: clockwise quarter turns that make the frame upright (0–3) |
/// | 18 | 2 | reserved, 0 |
/// | 20 | 4 | width, pixels (uint32; 0 for JPEG/PNG) |
/// | 24 | 4 | height, pixels (uint32; 0 for JPEG/PNG) |
/// | 28 | 4 | bytes per row (uint32; 0: tightly packed) |
///
/// The frame's bytes follow the header.
public struct FrameHeader: Sendable, Equatable {
    /// Header size in bytes.
    public static let size = 32
    /// The magic bytes `LVF1`.
    public static let magic: [UInt8] = [0x4C, 0x56, 0x46, 0x31]

    public var sequence: UInt32
    /// Capture time, microseconds on the client's monotonic clock.
    public var captureMicroseconds: Int64
    public var format: FrameFormat
    /// Clockwise rotation making the frame upright, degrees (0, 90, 180, 270).
    public var rotationDegrees: Int
    /// Pixels (0 for JPEG/PNG).
    public var width: Int
    public var height: Int
    /// Bytes between rows (0: tightly packed).
    public var bytesPerRow: Int

    /// Creates a header.
    public init(sequence: UInt32, captureMicroseconds: Int64, format: FrameFormat, rotationDegrees: Int = 0,
                width: Int = 0, height: Int = 0, bytesPerRow: Int = 0) {
        self.sequence = sequence
        self.captureMicroseconds = captureMicroseconds
        self.format = format
        self.rotationDegrees = rotationDegrees
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
    }

    /// Parses the header at the start of a binary message.
    /// - Throws: `StreamError.invalidFrame` naming what is wrong.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(StreamError) -> FrameHeader {
        guard bytes.count >= size else {
            throw StreamError(.invalidFrame, "a binary message of \(bytes.count) bytes is shorter than the \(size)-byte frame header")
        }
        guard Array(bytes[0..<4]) == magic else { throw StreamError(.invalidFrame, "the binary message does not start with LVF1") }
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        let time = UInt64(u32(8)) | UInt64(u32(12)) << 32
        guard let format = FrameFormat(rawValue: bytes[16]) else {
            throw StreamError(.invalidFrame, "pixel format \(bytes[16]) is not one of 0–8 (\(FrameFormat.allCases.map(\.name).joined(separator: ", ")))")
        }
        guard bytes[17] < 4 else { throw StreamError(.invalidFrame, "rotation \(bytes[17]) is not 0–3 quarter turns") }
        let header = FrameHeader(sequence: u32(4), captureMicroseconds: Int64(bitPattern: time), format: format,
                                 rotationDegrees: Int(bytes[17]) * 90, width: Int(u32(20)), height: Int(u32(24)),
                                 bytesPerRow: Int(u32(28)))
        if format.pixelFormat != nil {
            guard header.width > 0, header.height > 0 else {
                throw StreamError(.invalidFrame, "a \(format.name) frame needs its width and height in the header")
            }
        }
        guard header.captureMicroseconds >= 0 else {
            throw StreamError(.invalidFrame, "capture time \(header.captureMicroseconds) µs is negative")
        }
        return header
    }

    /// The 32 header bytes.
    public func encoded() -> [UInt8] {
        var out = Self.magic
        func u32(_ v: UInt32) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        u32(sequence)
        let t = UInt64(bitPattern: captureMicroseconds)
        u32(UInt32(t & 0xFFFF_FFFF))
        u32(UInt32(t >> 32))
        out += [format.rawValue, UInt8(rotationDegrees / 90 % 4), 0, 0]
        u32(UInt32(clamping: width))
        u32(UInt32(clamping: height))
        u32(UInt32(clamping: bytesPerRow))
        return out
    }

    /// The bytes per row to use: the header's, or tightly packed.
    public var effectiveBytesPerRow: Int {
        if bytesPerRow > 0 { return bytesPerRow }
        return width * (format.pixelFormat?.bytesPerPixel ?? 1)
    }
}

/// Names and versions of the wire protocol.
public enum StreamProtocol {
    /// The protocol's version string, sent in `session`.
    public static let version = "liveness-stream/1"
    /// The WebSocket subprotocol a camera client offers.
    public static let subprotocol = "liveness.v1"
    /// The prefix of the subprotocol entry that carries the session token (`token.<hex>`).
    public static let tokenPrefix = "token."
}
