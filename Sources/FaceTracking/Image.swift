import CFaceTracking

/// An owned 8-bit BGR image (a `cv::Mat` inside the shim). Frames, stills and plots are all
/// `Image`s. Not thread-safe: use one instance per thread.
public final class Image {
    package let handle: OpaquePointer

    /// An empty image (0×0), to be filled by a decoder or a `VideoReader`.
    public init() {
        guard let handle = ft_image_new() else { fatalError("out of memory allocating an image") }
        self.handle = handle
    }

    deinit { ft_image_free(handle) }

    /// Width in pixels.
    public var width: Int { Int(ft_image_width(handle)) }
    /// Height in pixels.
    public var height: Int { Int(ft_image_height(handle)) }
    /// True for a 0×0 image.
    public var isEmpty: Bool { width == 0 || height == 0 }
    /// Channels of the pixels: 3 for BGR (a decoded frame too, before its colour is converted), 1
    /// for grey, 0 when empty (`ft_image_channels`).
    public var channels: Int { Int(ft_image_channels(handle)) }

    /// Calls `body` with the image's BGR bytes (rows `bytesPerRow` apart), borrowed for the
    /// duration of the call (`ft_image_bytes`); an empty buffer for an empty image.
    public func withBGRBytes<R>(_ body: (_ bytes: UnsafeRawBufferPointer, _ bytesPerRow: Int) throws -> R) rethrows -> R {
        var stride = 0
        guard let base = ft_image_bytes(handle, &stride) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0), 0) }
        return try body(UnsafeRawBufferPointer(start: base, count: stride * height), stride)
    }

    /// Decodes a JPEG/PNG/BMP/... file (`ft_image_decode_file`, `cv::imread`).
    public convenience init(contentsOfFile path: String) throws(FaceTrackingError) {
        self.init()
        var error = ft_error()
        try check(ft_image_decode_file(path, handle, &error), &error)
    }

    /// Decodes an encoded image held in memory (`ft_image_decode_bytes`, `cv::imdecode`).
    public convenience init(encoded bytes: [UInt8]) throws(FaceTrackingError) {
        self.init()
        var failure: FaceTrackingError?
        bytes.withUnsafeBytes { raw in
            do throws(FaceTrackingError) { try load(encoded: raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Replaces the content with a decoded JPEG or PNG (`ft_image_decode_bytes`), reusing the
    /// buffer when the size matches; the bytes are only borrowed.
    public func load(encoded bytes: UnsafeRawBufferPointer) throws(FaceTrackingError) {
        var error = ft_error()
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw FaceTrackingError(kind: .argument, message: "image: no bytes")
        }
        try check(ft_image_decode_bytes(base.assumingMemoryBound(to: UInt8.self), bytes.count, handle, &error), &error)
    }

    /// The stored width and height (pixels) of an encoded JPEG or PNG, from its header alone
    /// (`ft_image_encoded_size`; before an EXIF orientation turns it).
    public static func encodedSize(_ bytes: UnsafeRawBufferPointer) throws(FaceTrackingError) -> (width: Int, height: Int) {
        var error = ft_error()
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw FaceTrackingError(kind: .argument, message: "image: no bytes")
        }
        var width: Int32 = 0, height: Int32 = 0
        try check(ft_image_encoded_size(base.assumingMemoryBound(to: UInt8.self), bytes.count, &width, &height, &error), &error)
        return (Int(width), Int(height))
    }

    /// A solid image of the given size (pixels) and colour (`ft_image_fill`).
    public convenience init(width: Int, height: Int, color: Color) throws(FaceTrackingError) {
        self.init()
        var error = ft_error()
        try check(ft_image_fill(handle, Int32(width), Int32(height), color.blue, color.green, color.red, &error), &error)
    }

    /// Layout of raw pixels handed to `init(pixels:...)` / `load(pixels:...)`.
    public enum PixelFormat: String, Sendable, CaseIterable {
        case bgr, rgb, gray, bgra, rgba
        /// YUV 4:2:0, a Y plane then interleaved U/V at half height (rows `bytesPerRow` apart);
        /// what most camera APIs deliver. Even width and height. Limited range, BT.601; the image
        /// keeps the planes: its grey copy is the Y plane, its BGR is converted when read.
        case nv12
        /// YUV 4:2:0, Y then U then V planes, tightly packed (`bytesPerRow` = width). Even sizes.
        /// Kept as planes, like `nv12`.
        case i420
        var c: ft_pixel_format {
            switch self {
            case .bgr: FT_PIXELS_BGR
            case .rgb: FT_PIXELS_RGB
            case .gray: FT_PIXELS_GRAY
            case .bgra: FT_PIXELS_BGRA
            case .rgba: FT_PIXELS_RGBA
            case .nv12: FT_PIXELS_NV12
            case .i420: FT_PIXELS_I420
            }
        }
        /// Bytes per pixel of the (first) plane.
        public var bytesPerPixel: Int {
            switch self {
            case .gray, .nv12, .i420: 1
            case .bgr, .rgb: 3
            case .bgra, .rgba: 4
            }
        }
        /// The fewest bytes a `width`×`height` frame with rows `bytesPerRow` apart occupies.
        public func minimumByteCount(width: Int, height: Int, bytesPerRow: Int) -> Int {
            let plane = bytesPerRow * (height - 1) + width * bytesPerPixel
            switch self {
            case .nv12: return bytesPerRow * height + bytesPerRow * (height / 2 - 1) + width
            case .i420: return width * height * 3 / 2
            default: return plane
            }
        }
    }

    /// Copies raw pixels (rows `bytesPerRow` apart) into a new BGR image (`ft_image_from_pixels`).
    /// The buffer is only borrowed for the call.
    public convenience init(pixels: UnsafeRawBufferPointer, width: Int, height: Int, bytesPerRow: Int,
                            format: PixelFormat) throws(FaceTrackingError) {
        self.init()
        try load(pixels: pixels, width: width, height: height, bytesPerRow: bytesPerRow, format: format)
    }

    /// Replaces the content with raw pixels converted to BGR (`ft_image_from_pixels`), reusing
    /// the buffer when the size matches; the pixels are only borrowed.
    public func load(pixels: UnsafeRawBufferPointer, width: Int, height: Int, bytesPerRow: Int,
                     format: PixelFormat) throws(FaceTrackingError) {
        guard width <= FrameLimits.maxFrameSide, height <= FrameLimits.maxFrameSide,
              width * height <= FrameLimits.maxFramePixels, bytesPerRow <= 16 * FrameLimits.maxFrameSide
        else {
            throw FaceTrackingError(kind: .limit, message: "pixels: \(width)×\(height) at \(bytesPerRow) bytes per row exceeds the limit (\(FrameLimits.maxFramePixels / 1_000_000) megapixels, \(FrameLimits.maxFrameSide) pixels a side)")
        }
        guard width > 0, height > 0, bytesPerRow > 0,
              pixels.count >= format.minimumByteCount(width: width, height: height, bytesPerRow: bytesPerRow)
        else {
            throw FaceTrackingError(kind: .argument,
                                    message: "pixels: \(pixels.count) bytes are too few for \(width)×\(height) at \(bytesPerRow) bytes per row")
        }
        var error = ft_error()
        let base = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self)
        try check(ft_image_from_pixels(base, Int32(width), Int32(height), Int32(bytesPerRow), format.c, handle, &error), &error)
    }

    /// True when the file's first bytes are those of an image format OpenCV reads (`ft_file_is_image`).
    public static func isImageFile(_ path: String) -> Bool { ft_file_is_image(path) != 0 }

    /// The frame's I420 bytes (Y, U, V planes, tightly packed) when it is a decoded video
    /// frame whose picture is 8-bit 4:2:0, limited range, even-sized and upright with square
    /// pixels (`ft_image_i420`): the lossless form to stream it in. Nil otherwise.
    public func i420Bytes() -> [UInt8]? {
        let count = width * height * 3 / 2
        guard count > 0 else { return nil }
        var error = ft_error()
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { ft_image_i420(handle, $0.baseAddress, count, &error) }
        return status == FT_OK ? bytes : nil
    }

    /// A copy (`ft_image_copy`): deep, except that a decoded video frame's copy shares its
    /// decoded picture (converted to BGR only when read).
    public func copy() -> Image {
        let result = Image()
        var error = ft_error()
        _ = ft_image_copy(handle, result.handle, &error)
        return result
    }

    /// Copies this image's pixels into `destination`, reusing its buffer when sizes match.
    public func copy(into destination: Image) {
        var error = ft_error()
        _ = ft_image_copy(handle, destination.handle, &error)
    }

    /// JPEG bytes at `quality` 0...100 (`ft_image_encode_jpeg`, `cv::imencode`).
    public func jpegData(quality: Int = 90) throws(FaceTrackingError) -> [UInt8] {
        var buffer = ft_buffer()
        var error = ft_error()
        try check(ft_image_encode_jpeg(handle, Int32(quality), &buffer, &error), &error)
        defer { ft_buffer_free(&buffer) }
        return Array(UnsafeBufferPointer(start: buffer.bytes, count: buffer.count))
    }

    /// PNG bytes (`ft_image_encode_png`, `cv::imencode`).
    public func pngData() throws(FaceTrackingError) -> [UInt8] {
        var buffer = ft_buffer()
        var error = ft_error()
        try check(ft_image_encode_png(handle, &buffer, &error), &error)
        defer { ft_buffer_free(&buffer) }
        return Array(UnsafeBufferPointer(start: buffer.bytes, count: buffer.count))
    }

    /// A grey copy whose longer side is at most `maxSide` pixels, written into `destination`;
    /// returns the factor applied (`ft_image_reduce_gray`). Only `BackgroundMotion` reads it.
    public func reducedGray(maxSide: Int, into destination: Image) throws(FaceTrackingError) -> Double {
        var error = ft_error()
        var scale = 1.0
        try check(ft_image_reduce_gray(handle, Int32(maxSide), destination.handle, &scale, &error), &error)
        return scale
    }

    /// A grey thumbnail of `width` × `height` pixels of `region` (pixels, clipped to the image;
    /// the whole image when nil), area-averaged, written into `destination`
    /// (`ft_image_thumbnail`). Throws when the region lies outside the image.
    public func thumbnail(of region: Rect?, width: Int, height: Int, into destination: Image) throws(FaceTrackingError) {
        var error = ft_error()
        let r = region ?? Rect(x: 0, y: 0, width: 0, height: 0)
        try check(ft_image_thumbnail(handle, r.x, r.y, r.width, r.height, Int32(width), Int32(height), destination.handle, &error), &error)
    }

    /// A grey copy of the image written into `destination`, whose buffer is reused when the size
    /// matches (`ft_image_to_gray`): a decoded video frame's luma plane (its colour is never
    /// converted), or `cv::cvtColor` of BGR pixels. A frame converted once and handed to the
    /// tracker (`FaceTracker.process(_:gray:timestampMilliseconds:)`) and the rotation estimate.
    /// `destination` also keeps its reductions by 2, 4, 8, ..., from which its thumbnails, its
    /// `reducedGray` and the tracker's scans of a large face start (cheaper than averaging the
    /// whole-resolution pixels again); any later change to its pixels drops them.
    public func gray(into destination: Image) throws(FaceTrackingError) {
        var error = ft_error()
        try check(ft_image_to_gray(handle, destination.handle, &error), &error)
    }

    /// Turns the image clockwise by 0, 90, 180 or 270 degrees (`ft_image_rotate`).
    public func rotate(clockwiseDegrees: Int) throws(FaceTrackingError) {
        var error = ft_error()
        try check(ft_image_rotate(handle, Int32(clockwiseDegrees), &error), &error)
    }

    /// Mirrors the image left-right in place (`ft_image_flip_horizontal`).
    public func flipHorizontally() throws(FaceTrackingError) {
        var error = ft_error()
        try check(ft_image_flip_horizontal(handle, &error), &error)
    }

    /// Resizes in place by `factor` (`ft_image_scale`).
    public func scale(by factor: Double) throws(FaceTrackingError) {
        var error = ft_error()
        try check(ft_image_scale(handle, factor, &error), &error)
    }

    /// Mean brightness (0...255) and sharpness (variance of the Laplacian) inside `box`, or the
    /// whole image when `box` is nil (`ft_image_quality`).
    public func quality(in box: Rect? = nil) throws(FaceTrackingError) -> (brightness: Double, sharpness: Double) {
        var brightness = 0.0, sharpness = 0.0
        var error = ft_error()
        let b = box ?? Rect(x: 0, y: 0, width: 0, height: 0)
        try check(ft_image_quality(handle, b.x, b.y, b.width, b.height, &brightness, &sharpness, &error), &error)
        return (brightness, sharpness)
    }
}
