import LivenessKit
import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence

/// What `analyze` does with each input, besides the report.
public struct AnalyzeOptions: Sendable {
    public var policy = LivenessPolicy()
    /// Seed of the challenge order.
    public var seed: UInt64 = 1
    /// Write the trace here (one input) or under this file name in each input's folder (a batch).
    public var tracePath: String?
    /// Device-motion sidecar for the input (see docs/motion-format.md).
    public var motionPath: String?
    /// Estimate the device rotation from the video's background when there are no motion samples.
    public var estimateRotation = true
    /// Write `annotated.mp4` (kept for passed sessions, like the stills).
    public var annotate = false
    /// Keep `annotated.mp4` for failed sessions too (a debugging aid; it shows the face).
    public var annotateFailed = false
    /// Write `timeline.png`.
    public var plot = false
    /// Redo inputs whose report is already complete.
    public var force = false
    /// Run an input's stages on several threads (decoding ahead, rotation beside tracking): for
    /// fewer inputs at once than cores. Results do not change.
    public var parallelStages = false
    /// Sign each report: `report.sig` beside `report.json` (docs/signing.md).
    public var signingKey: SigningKey?
    /// Prompted mode: the prompts a capture client showed (`analyze --challenge`, a verified
    /// prompt log); `nil` draws them from `seed` when the policy is prompted.
    public var plan: ChallengePlan?
    public init() {}
}

/// The outcome of one input of a batch.
public struct JobResult: Sendable {
    public var input: String
    /// The folder holding the report and stills.
    public var folder: String
    /// The report (also for an invalid input, with reason `invalidInput`).
    public var report: LivenessReport?
    /// The problem with the input or the output, when there was one.
    public var error: InputError?
    /// True when a complete report already existed and the input was not analysed again.
    public var skipped = false
}

/// Analyses one input into its output folder: `report.json` (written atomically), the stills
/// when the verdict is `passed`, and on request the trace, the annotated video and the plot.
public enum AnalysisJob {
    /// The files `analyze` may write in an input's folder (besides the trace, wherever it goes).
    static let folderFiles = ["report.json", "autoshot.jpg", "snapshot.jpg", "annotated.mp4", "timeline.png",
                              EvidenceFolder.signatureName]

    public static func run(input: String, folder: String, options: AnalyzeOptions, model: LandmarkModel) -> JobResult {
        let reportPath = folder + "/report.json"
        var result = JobResult(input: input, folder: folder)
        // An output that is the input (or its motion sidecar) would destroy it: refuse before
        // anything is written, not even a report.
        do {
            for name in folderFiles {
                try OutputGuard.check(output: folder + "/" + name, option: "the output folder's \(name)", inputs: [input, options.motionPath])
            }
            try OutputGuard.check(output: options.tracePath, option: "--trace", inputs: [input, options.motionPath])
        } catch {
            result.error = error
            return result
        }
        if !options.force, let existing = completeReport(at: reportPath), existing.input.path == ForeignNames.shown(input),
           ReportSealing.isSealed(folder: folder, key: options.signingKey), requestedOutputsExist(folder: folder, options: options) {
            result.report = existing
            result.skipped = true
            return result
        }
        do {
            try AtomicFile.makeDirectory(folder)
            result.report = try analyse(input: input, folder: folder, options: options, model: model)
        } catch {
            result.error = error
            // Record the failure where the report would be, so a batch's folder says what happened,
            // and take away what an earlier run of the input left: a folder never holds stills (or
            // a face video) its report does not release, nor a plot of another run.
            for name in ["autoshot.jpg", "snapshot.jpg", "annotated.mp4", "timeline.png"] { unlink(folder + "/" + name) }
            var machine = LivenessMachine(policy: options.policy, seed: options.seed, plan: options.plan)
            _ = machine.finish(Interruption.signal != nil ? .cancelled : .invalidInput)
            let report = LivenessReport(machine: machine, input: ReportInput(path: input, kind: .video), wallSeconds: 0,
                                        stills: (nil, nil), warnings: [], error: error.description)
            result.report = report
            if let data = try? report.jsonData() { try? AtomicFile.write([UInt8](data), to: reportPath) }
        }
        if let problem = ReportSealing.seal(folder: folder, input: input, report: result.report, key: options.signingKey),
           result.error == nil { result.error = problem }
        return result
    }

    /// The input path recorded in the report at `path`, if a report is there.
    static func reportInput(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path),
              let report = try? JSONDecoder().decode(LivenessReport.self, from: data) else { return nil }
        return report.input.path
    }

    /// A finished report at `path` (not one that recorded an invalid input or an interrupted
    /// run, which a rerun retries).
    static func completeReport(at path: String) -> LivenessReport? {
        guard let data = FileManager.default.contents(atPath: path),
              let report = try? JSONDecoder().decode(LivenessReport.self, from: data),
              report.schema == LivenessReport.schemaIdentifier, report.verdict.reason != .invalidInput,
              report.verdict.reason != .cancelled
        else { return nil }
        return report
    }

    /// Whether the trace and plot this run asks for are there: a rerun that adds `--plot` or
    /// `--trace` to a complete input analyses it again rather than writing neither.
    static func requestedOutputsExist(folder: String, options: AnalyzeOptions) -> Bool {
        if options.plot && !FileManager.default.fileExists(atPath: folder + "/timeline.png") { return false }
        if let trace = options.tracePath, !FileManager.default.fileExists(atPath: trace) { return false }
        return true
    }

    private static func analyse(input: String, folder: String, options: AnalyzeOptions, model: LandmarkModel) throws(InputError) -> LivenessReport {
        let source = try FrameSource(path: input)
        let rotation = try RotationChoice.provider(motionPath: options.motionPath, estimateFromVideo: options.estimateRotation,
                                                   source: source)
        let session = try AnalysisSession(source: source, model: model, policy: options.policy, seed: options.seed,
                                          stopAtVerdict: true, rotation: rotation, parallelStages: options.parallelStages,
                                          plan: options.plan)
        var writer: TraceWriter?
        if let trace = options.tracePath {
            let format: TraceFormat = trace.hasSuffix(".jsonl") ? .jsonl : .csv
            writer = TraceWriter(sink: try OutputSink(path: trace), format: format)
        }
        // The annotated video is optional: when it cannot be written (a frame size no encoder
        // takes, a size that changes midway) the verdict stands and the report says why.
        var annotationProblem: String?
        var annotator: FrameAnnotator?
        if options.annotate {
            do {
                annotator = try FrameAnnotator(path: folder + "/annotated.mp4", framesPerSecond: source.videoInfo?.framesPerSecond ?? 25,
                                               width: source.width, height: source.height, policy: options.policy)
            } catch {
                annotationProblem = error.problem
            }
        }
        var records: [TraceRecord] = []
        var events: [(seconds: Double, event: LivenessEvent)] = []
        let outcome: AnalysisOutcome
        do {
            outcome = try session.run { step in
                if Interruption.signal != nil { throw Interruption.error(path: input) }
                writer?.write(step.record)
                if let current = annotator {
                    do {
                        try current.add(step)
                    } catch {
                        annotationProblem = "frame \(step.record.frame): \((error as? InputError)?.problem ?? "\(error)")"
                        annotator = nil
                    }
                }
                if options.plot {
                    records.append(step.record)
                    events += step.events.map { (step.record.seconds, $0) }
                }
            }
        } catch let error as InputError {
            throw error
        } catch {
            throw InputError(path: input, problem: "\(error)")
        }
        try writer?.finish()
        let passed = outcome.machine.verdict?.status == .passed
        do {
            try annotator?.finish(keep: passed || options.annotateFailed)
        } catch {
            annotationProblem = error.problem
        }
        if annotationProblem != nil { unlink(folder + "/annotated.mp4") }
        let stills = StillKeeper(autoshot: session.processor.autoshot, snapshot: session.processor.snapshot)
        let paths = try stills.release(passed: passed, folder: folder)
        var warnings = outcome.warnings
        if let annotationProblem { warnings.append("annotated.mp4 not written: \(annotationProblem)") }
        if let rotation = rotation as? VideoRotationEstimator, let note = rotation.summary { warnings.append(note) }
        if let rotation = rotation as? SensorRotation, let note = rotation.summary { warnings.append(note) }
        let report = LivenessReport(machine: outcome.machine,
                                    input: ReportInput(source: source, framesDecoded: outcome.framesDecoded),
                                    wallSeconds: outcome.wallSeconds, stills: paths, warnings: warnings)
        if options.plot {
            if let verdict = outcome.machine.verdict, verdict.reason == .timeout {
                events.append((Double(verdict.timestampMicroseconds) / 1e6, .verdict(verdict)))
            }
            let title = "\(URL(fileURLWithPath: input).lastPathComponent): \(report.summary)"
            let png: [UInt8]
            do {
                png = try TimelinePlot(title: title, records: records, events: events, policy: options.policy).render().pngData()
            } catch {
                throw InputError(path: folder + "/timeline.png", error)
            }
            try AtomicFile.write(png, to: folder + "/timeline.png")
        }
        do {
            try AtomicFile.write([UInt8](try report.jsonData()), to: folder + "/report.json")
        } catch let error as InputError {
            throw error
        } catch {
            throw InputError(path: folder + "/report.json", problem: "cannot encode the report: \(error)")
        }
        return report
    }
}
