import Foundation
import LivenessCore

/// The trace formats `TraceReader` understands.
public enum TraceFileFormat: String, Sendable, CaseIterable {
    /// This engine's CSV traces (`liveness trace --format csv`): a header row naming the columns
    /// of `TraceWriter.columns`, in any order; landmark and unknown columns are ignored.
    case csv
    /// This engine's JSON Lines traces (`liveness trace --format jsonl`): one object per frame
    /// with the same keys; `landmarks` and unknown keys are ignored.
    case jsonl
    /// ARKit-style face-tracking traces, `arkit-trace/1` (header line, then one object per frame).
    case arkit = "arkit-trace/1"
}

/// One frame of a trace: the observation for the state machine and the line it came from.
public struct TraceFrame: Sendable, Equatable {
    /// The 1-based line number of the frame's record in the file.
    public var line: Int
    /// The observation, timestamps in microseconds from the trace's first frame.
    public var observation: Observation
}

/// Reads a face-tracking trace into `Observation`s, one frame at a time, exactly as the front
/// end that wrote it fed the state machine (for this engine's traces: as `FaceObserver` built them).
///
/// **Format detection** from the first non-empty line: a JSON object with `"format"` is an
/// `arkit-trace/1` header; a JSON object with `"frame"` is an engine JSONL record; anything else
/// is taken as an engine CSV header. Empty and whitespace-only lines are skipped everywhere; a
/// `\r` before the `\n` is dropped (CRLF files read like LF files).
///
/// **Limits**: a trace file may hold at most `maximumFileBytes` (64 MiB) and a line at most
/// `maximumLineBytes` (64 KiB; a CSV line with landmarks is about 2 KiB). The file is read in
/// constant memory, one line at a time.
///
/// **Plausible values**: every number read must lie in its field's range (`TraceRange`,
/// docs/trace-formats.md): a face centre of 1e308, an EAR of −5 or a rotation of −1000 °/s is an
/// error naming the line and the field, not an observation.
///
/// **Time**: timestamps are made relative to the trace's first frame (its timestamp becomes 0),
/// as `FaceObserver` does for videos, so reports count seconds from the first frame. Whether
/// they increase is left to the state machine, which is the one place that rule lives.
///
/// **Errors** (`TraceReadError`) name the file and the 1-based line: a line that is not UTF-8 or
/// not JSON, not an object, too long, has a missing key or column, a value of the wrong type, a
/// bad or implausible number or the wrong number of CSV fields.
public final class TraceReader {
    /// The largest trace file read, in bytes (64 MiB).
    public static let maximumFileBytes = 64 << 20
    /// The longest line read, in bytes without its end (64 KiB).
    public static let maximumLineBytes = 64 << 10

    /// The trace file's path (or the name given to in-memory text), used in messages.
    public let path: String
    /// The detected format.
    public let format: TraceFileFormat
    /// The header of an `arkit-trace/1` file; `nil` for engine traces.
    public let arkitHeader: ARKitTraceHeader?
    /// Problems worth reporting that do not stop reading (e.g. face boxes ignored).
    public private(set) var warnings: [String] = []
    /// Frames returned so far.
    public private(set) var framesRead = 0

    private var reader: LineReader
    /// The frame index of the last engine record read.
    private var lastFrameIndex: Int?
    /// A line already read but not yet returned as a frame (the first record of a JSONL trace).
    private var pending: (number: Int, text: String)?
    private let csvColumns: [String: Int]
    private let csvColumnCount: Int
    private var origin: Int64?
    private var droppedBox = false

    /// Opens and detects the trace at `path`.
    /// - Throws: `TraceReadError` when the file does not exist, cannot be read, is larger than
    ///   `maximumFileBytes`, is empty, or its first line is not UTF-8 or not a valid header (CSV)
    ///   or record (JSONL) or `arkit-trace/1` header.
    public convenience init(path: String) throws(TraceReadError) {
        let reader: LineReader
        do {
            reader = try LineReader(path: path, maximumBytes: Self.maximumFileBytes, maximumLineBytes: Self.maximumLineBytes,
                                    noun: "trace")
        } catch {
            throw TraceReadError(path: path, line: error.line, problem: error.problem == "no such trace" ? "no such file" : error.problem)
        }
        try self.init(reader: reader, path: path)
    }

    /// Reads a trace held in memory; `path` names it in messages. The same limits apply.
    public convenience init(text: String, path: String) throws(TraceReadError) {
        try self.init(bytes: Array(text.utf8), path: path)
    }

    /// Reads a trace held in memory as bytes (UTF-8 text); `path` names it in messages.
    public convenience init(bytes: [UInt8], path: String) throws(TraceReadError) {
        let reader: LineReader
        do {
            reader = try LineReader(bytes: bytes, maximumBytes: Self.maximumFileBytes, maximumLineBytes: Self.maximumLineBytes,
                                    noun: "trace")
        } catch {
            throw TraceReadError(path: path, line: error.line, problem: error.problem)
        }
        try self.init(reader: reader, path: path)
    }

    private init(reader: LineReader, path: String) throws(TraceReadError) {
        self.path = path
        self.reader = reader
        guard let (number, firstLine) = try Self.nextNonBlank(&self.reader, path: path) else {
            throw TraceReadError(path: path, line: nil, problem: "empty trace: no header and no frames")
        }
        var columns: [String: Int] = [:]
        var columnCount = 0
        var header: ARKitTraceHeader?
        if firstLine.drop(while: \.isWhitespace).hasPrefix("{") {
            let members = try Self.object(firstLine, path: path, line: number)
            if members["format"] != nil {
                do {
                    header = try ARKitTraceDecoding.header(JSONFields(members: members))
                } catch {
                    throw TraceReadError(path: path, line: number, problem: error.message)
                }
                format = .arkit
            } else if members["frame"] != nil {
                format = .jsonl
                pending = (number, firstLine)
            } else {
                throw TraceReadError(path: path, line: number, problem:
                    "a JSON trace must start with an \(ARKitTraceHeader.formatIdentifier) header (key 'format') or an engine trace record (key 'frame')")
            }
        } else {
            let names = firstLine.split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0).trimmingCharacters(in: .whitespaces) }
            for (i, name) in names.enumerated() {
                if columns[name] != nil {
                    throw TraceReadError(path: path, line: number, problem: "the CSV header names column '\(Self.quoted(name))' twice")
                }
                columns[name] = i
            }
            let missing = EngineRecordDecoding.requiredColumns.filter { columns[$0] == nil }
            guard missing.isEmpty else {
                throw TraceReadError(path: path, line: number, problem:
                    "not a trace: the first line is neither JSON nor a CSV header with the columns \(missing.map { "'\($0)'" }.joined(separator: ", "))")
            }
            columnCount = names.count
            format = .csv
        }
        csvColumns = columns
        csvColumnCount = columnCount
        arkitHeader = header
    }

    /// The next frame, or `nil` at the end of the trace.
    /// - Throws: `TraceReadError` naming the line when the record is malformed.
    public func next() throws(TraceReadError) -> TraceFrame? {
        let number: Int
        let line: String
        if let pending {
            (number, line) = pending
            self.pending = nil
        } else {
            guard let (n, text) = try Self.nextNonBlank(&reader, path: path) else { return nil }
            (number, line) = (n, text)
        }
        var observation: Observation
        do {
            switch format {
            case .csv:
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                guard fields.count == csvColumnCount else {
                    throw FieldError(message: "\(fields.count) fields where the header has \(csvColumnCount) columns")
                }
                observation = try EngineRecordDecoding.observation(CSVRow(columns: csvColumns, fields: fields))
            case .jsonl:
                observation = try EngineRecordDecoding.observation(JSONFields(members: try Self.object(line, path: path, line: number)))
            case .arkit:
                observation = try ARKitTraceDecoding.observation(
                    JSONFields(members: try Self.object(line, path: path, line: number)), index: framesRead,
                    header: arkitHeader!, droppedBox: &droppedBox)
                if droppedBox, !warnings.contains(Self.droppedBoxWarning) { warnings.append(Self.droppedBoxWarning) }
            }
        } catch let error as FieldError {
            throw TraceReadError(path: path, line: number, problem: error.message)
        } catch let error as TraceReadError {
            throw error
        } catch {
            throw TraceReadError(path: path, line: number, problem: "\(error)")
        }
        // An engine trace numbers its frames as the decoder read them: a record whose index does
        // not count up (a column of zeros, a pasted or reordered trace) would put every event on
        // the wrong frame.
        if format != .arkit {
            if let last = lastFrameIndex, observation.frameIndex <= last {
                throw TraceReadError(path: path, line: number, problem: "frame \(observation.frameIndex) comes after frame \(last); the frame column must count up")
            }
            lastFrameIndex = observation.frameIndex
        }
        // Times are bounded (TraceRange.seconds), so the difference cannot overflow.
        let origin = self.origin ?? observation.timestampMicroseconds
        self.origin = origin
        observation.timestampMicroseconds -= origin
        framesRead += 1
        return TraceFrame(line: number, observation: observation)
    }

    /// Every remaining frame.
    public func readAll() throws(TraceReadError) -> [TraceFrame] {
        var frames: [TraceFrame] = []
        while let frame = try next() { frames.append(frame) }
        return frames
    }

    private static let droppedBoxWarning =
        "faceBox values were ignored: the header gives no imageWidth/imageHeight to turn them into pixels"

    /// The next line that is not blank, decoded, with its 1-based number; `nil` at the end.
    private static func nextNonBlank(_ reader: inout LineReader, path: String) throws(TraceReadError) -> (Int, String)? {
        while true {
            let bytes: ArraySlice<UInt8>?
            do {
                bytes = try reader.next()
            } catch {
                throw TraceReadError(path: path, line: error.line, problem: error.problem)
            }
            guard let bytes else { return nil }
            guard let text = LineReader.text(bytes) else {
                throw TraceReadError(path: path, line: reader.lineNumber, problem: "not UTF-8 text; a trace is CSV or JSON Lines")
            }
            if !text.allSatisfy(\.isWhitespace) { return (reader.lineNumber, text) }
        }
    }

    /// `text` cut to 40 characters for a message.
    static func quoted(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }

    private static func object(_ line: String, path: String, line number: Int) throws(TraceReadError) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Substring(line))
        } catch {
            throw TraceReadError(path: path, line: number, problem: error.message)
        }
        guard let members = value.members else {
            throw TraceReadError(path: path, line: number, problem: "expected a JSON object, found \(value.typeName)")
        }
        return members
    }
}
