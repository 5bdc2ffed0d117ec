import Foundation

/// A problem reading a text input line by line: the 1-based line at fault (when one is) and
/// the problem. The caller adds the file name and its own error type.
struct LineReadError: Error {
    var line: Int?
    var problem: String
}

/// Reads a text file (or bytes in memory) one line at a time, in constant memory: a 64 KiB read
/// buffer plus the current line, whatever the file's size.
///
/// * A line ends at `\n`; a `\r` right before it is dropped, so CRLF files read like LF files.
///   The last line needs no `\n`.
/// * `maximumBytes` bounds the whole input and `maximumLineBytes` one line (without its end);
///   a regular file over the limit is rejected before anything is read, and any input stops
///   being read as soon as it passes a limit.
/// * Lines are returned as bytes; `LineReader.text(_:)` decodes one as UTF-8.
struct LineReader {
    /// Bytes read per `read(2)`.
    static let chunkBytes = 64 * 1024

    private let handle: FileHandle?
    private var buffer: [UInt8]
    private var start = 0
    private var atEnd: Bool
    private var total = 0
    private let maximumBytes: Int
    private let maximumLineBytes: Int
    /// What the input is, for messages ("trace", "motion file").
    private let noun: String
    /// The number of the line `next()` returned last (1-based); 0 before the first.
    private(set) var lineNumber = 0

    /// Opens `path`. Throws a `LineReadError` without a line when it does not exist, is a
    /// directory, cannot be read or is larger than `maximumBytes`.
    init(path: String, maximumBytes: Int, maximumLineBytes: Int, noun: String) throws(LineReadError) {
        handle = try Self.open(path, maximumBytes: maximumBytes, noun: noun)
        buffer = []
        atEnd = false
        self.maximumBytes = maximumBytes
        self.maximumLineBytes = maximumLineBytes
        self.noun = noun
    }

    /// Reads `bytes` held in memory, with the same limits.
    init(bytes: [UInt8], maximumBytes: Int, maximumLineBytes: Int, noun: String) throws(LineReadError) {
        guard bytes.count <= maximumBytes else { throw LineReadError(line: nil, problem: Self.tooLarge(noun, maximumBytes)) }
        handle = nil
        buffer = bytes
        atEnd = true
        total = bytes.count
        self.maximumBytes = maximumBytes
        self.maximumLineBytes = maximumLineBytes
        self.noun = noun
    }

    /// The next line without its end, or `nil` after the last one.
    mutating func next() throws(LineReadError) -> ArraySlice<UInt8>? {
        var searchFrom = start
        while true {
            if let newline = buffer[searchFrom...].firstIndex(of: 0x0A) {
                let end = newline > start && buffer[newline - 1] == 0x0D ? newline - 1 : newline
                try checkLength(end - start, line: lineNumber + 1)
                let line = buffer[start..<end]
                start = newline + 1
                lineNumber += 1
                return line
            }
            try checkLength(buffer.count - start - (buffer.last == 0x0D ? 1 : 0), line: lineNumber + 1)
            if atEnd {
                guard start < buffer.count else { return nil }
                let end = buffer.last == 0x0D ? buffer.count - 1 : buffer.count
                let line = buffer[start..<end]
                start = buffer.count
                lineNumber += 1
                return line
            }
            // Keep the partial line, read more after it.
            if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            searchFrom = buffer.count
            try fill()
        }
    }

    /// Decodes a line as UTF-8 text, `nil` when it is not valid UTF-8.
    static func text(_ line: ArraySlice<UInt8>) -> String? {
        String(validating: line, as: UTF8.self)
    }

    /// Reads a whole small file of at most `maximumBytes` (policy files).
    static func readAll(path: String, maximumBytes: Int, noun: String) throws(LineReadError) -> [UInt8] {
        var reader = try LineReader(path: path, maximumBytes: maximumBytes, maximumLineBytes: maximumBytes, noun: noun)
        while !reader.atEnd { try reader.fill() }
        return reader.buffer
    }

    private func checkLength(_ length: Int, line: Int) throws(LineReadError) {
        if length > maximumLineBytes {
            throw LineReadError(line: line, problem: "the line is longer than \(Self.size(maximumLineBytes)), the limit for a \(noun) line")
        }
    }

    private mutating func fill() throws(LineReadError) {
        guard let handle else {
            atEnd = true
            return
        }
        let chunk: Data?
        do {
            chunk = try handle.read(upToCount: Self.chunkBytes)
        } catch {
            throw LineReadError(line: nil, problem: "cannot read the \(noun): \((error as NSError).localizedDescription)")
        }
        guard let chunk, !chunk.isEmpty else {
            atEnd = true
            return
        }
        total += chunk.count
        if total > maximumBytes { throw LineReadError(line: nil, problem: Self.tooLarge(noun, maximumBytes)) }
        buffer.append(contentsOf: chunk)
    }

    private static func open(_ path: String, maximumBytes: Int, noun: String) throws(LineReadError) -> FileHandle {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw LineReadError(line: nil, problem: "no such \(noun)")
        }
        if isDirectory.boolValue { throw LineReadError(line: nil, problem: "is a directory, not a \(noun)") }
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
           attributes[.type] as? FileAttributeType == .typeRegular,
           let size = (attributes[.size] as? NSNumber)?.intValue, size > maximumBytes {
            throw LineReadError(line: nil, problem: tooLarge(noun, maximumBytes, actual: size))
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LineReadError(line: nil, problem: "cannot read the \(noun)")
        }
        return handle
    }

    private static func tooLarge(_ noun: String, _ limit: Int, actual: Int? = nil) -> String {
        if let actual { return "the \(noun) holds \(actual) bytes; the limit for a \(noun) is \(size(limit))" }
        return "the \(noun) is larger than \(size(limit)), the limit for a \(noun)"
    }

    /// A byte count in words: "64 KiB", "16 MiB", "1.3 GiB".
    static func size(_ bytes: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) bytes" }
        return value.rounded() == value ? "\(Int(value)) \(units[unit])" : "\(String(format: "%.1f", value)) \(units[unit])"
    }
}
