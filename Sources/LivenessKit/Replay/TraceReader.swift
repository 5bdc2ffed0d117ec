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
/// trailing `\r` is dropped.
///
/// **Time**: timestamps are made relative to the trace's first frame (its timestamp becomes 0),
/// as `FaceObserver` does for videos, so reports count seconds from the first frame. Whether
/// they increase is left to the state machine, which is the one place that rule lives.
///
/// **Errors** (`TraceReadError`) name the file and the 1-based line: a line that is not JSON, not
/// an object, has a missing key or column, a value of the wrong type, a bad number or the wrong
/// number of CSV fields.
public final class TraceReader {
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

    private let text: String
    private let lines: [Substring]
    private var cursor: Int
    private let csvColumns: [String: Int]
    private let csvColumnCount: Int
    private var origin: Int64?
    private var droppedBox = false

    /// Opens and detects the trace at `path`.
    /// - Throws: `TraceReadError` when the file cannot be read, is empty, is not UTF-8 text or its
    ///   first line is not a valid header (CSV) or record (JSONL) or `arkit-trace/1` header.
    public convenience init(path: String) throws(TraceReadError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw TraceReadError(path: path, line: nil, problem: exists ? "cannot read the file" : "no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw TraceReadError(path: path, line: nil, problem: "not UTF-8 text; a trace is CSV or JSON Lines")
        }
        try self.init(text: text, path: path)
    }

    /// Reads a trace held in memory; `path` names it in messages.
    public init(text: String, path: String) throws(TraceReadError) {
        self.path = path
        self.text = text
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? $0.dropLast() : $0
        }
        guard let first = lines.firstIndex(where: { !Self.isBlank($0) }) else {
            throw TraceReadError(path: path, line: nil, problem: "empty trace: no header and no frames")
        }
        let firstLine = lines[first]
        var columns: [String: Int] = [:]
        var columnCount = 0
        var header: ARKitTraceHeader?
        if firstLine.drop(while: \.isWhitespace).hasPrefix("{") {
            let members = try Self.object(firstLine, path: path, line: first + 1)
            if members["format"] != nil {
                do {
                    header = try ARKitTraceDecoding.header(JSONFields(members: members))
                } catch {
                    throw TraceReadError(path: path, line: first + 1, problem: error.message)
                }
                format = .arkit
                cursor = first + 1
            } else if members["frame"] != nil {
                format = .jsonl
                cursor = first
            } else {
                throw TraceReadError(path: path, line: first + 1, problem:
                    "a JSON trace must start with an \(ARKitTraceHeader.formatIdentifier) header (key 'format') or an engine trace record (key 'frame')")
            }
        } else {
            let names = firstLine.split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0).trimmingCharacters(in: .whitespaces) }
            for (i, name) in names.enumerated() {
                if columns[name] != nil {
                    throw TraceReadError(path: path, line: first + 1, problem: "the CSV header names column '\(name)' twice")
                }
                columns[name] = i
            }
            let missing = EngineRecordDecoding.requiredColumns.filter { columns[$0] == nil }
            guard missing.isEmpty else {
                throw TraceReadError(path: path, line: first + 1, problem:
                    "not a trace: the first line is neither JSON nor a CSV header with the columns \(missing.map { "'\($0)'" }.joined(separator: ", "))")
            }
            columnCount = names.count
            format = .csv
            cursor = first + 1
        }
        csvColumns = columns
        csvColumnCount = columnCount
        arkitHeader = header
    }

    /// The next frame, or `nil` at the end of the trace.
    /// - Throws: `TraceReadError` naming the line when the record is malformed.
    public func next() throws(TraceReadError) -> TraceFrame? {
        while cursor < lines.count, Self.isBlank(lines[cursor]) { cursor += 1 }
        guard cursor < lines.count else { return nil }
        let line = lines[cursor]
        let number = cursor + 1
        cursor += 1
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

    private static func isBlank(_ line: Substring) -> Bool { line.allSatisfy(\.isWhitespace) }

    private static func object(_ line: Substring, path: String, line number: Int) throws(TraceReadError) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            throw TraceReadError(path: path, line: number, problem: error.message)
        }
        guard case let .object(members) = value else {
            throw TraceReadError(path: path, line: number, problem: "expected a JSON object, found \(value.typeName)")
        }
        return members
    }
}
