import LivenessKit
import FaceTracking
import Foundation
import LivenessCore

/// The regression suite: the generated cases (rendered by Tools/generate_cases.py when missing
/// or stale) and, when present, the labelled real recordings. Runs on `jobs` worker threads,
/// each with its own tracker; the landmark model is shared.
public final class RegressSuite: @unchecked Sendable {
    /// Folders of case folders (each with recipe.json and expected.json).
    public var caseDirectories: [String]
    /// The folder with labels.json and the real clips, or nil to skip them.
    public var realDirectory: String?
    public var jobs = 2
    /// Render missing or stale cases before running.
    public var generate = true
    /// The project's annotations of the real clips (winks, blinks labels.json lacks); default:
    /// `Recordings/real-clip-annotations.json` of the package the first case folder belongs to.
    public var annotationsPath: String?
    /// The project's blink labels of the real clips (docs/blinks.md); default:
    /// `Recordings/blink-labels.json` of the package the first case folder belongs to.
    public var blinkLabelsPath: String?
    /// Labelled files (`blinkLabelsPath`) that the real clips' folder lacks.
    public private(set) var blinkLabelsMissing: [String] = []

    public private(set) var caseResults: [CaseResult] = []
    public private(set) var realResults: [RealClipResult] = []
    public private(set) var generationSeconds = 0.0
    public private(set) var runSeconds = 0.0

    public init(caseDirectories: [String], realDirectory: String?) {
        self.caseDirectories = caseDirectories
        self.realDirectory = realDirectory
        annotationsPath = caseDirectories.first.map { RealClipAnnotations.path(packageRoot: RegressSuite.root(of: $0)) }
        blinkLabelsPath = caseDirectories.first.map { BlinkLabels.path(packageRoot: RegressSuite.root(of: $0)) }
    }

    /// The problem that stops the generated cases from being produced (no python3 with OpenCV,
    /// no photo): the suite cannot run them.
    public struct GenerationError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The package root for a case folder `<root>/Recordings/cases`.
    public static func root(of directory: String) -> String {
        URL(fileURLWithPath: directory).standardizedFileURL.deletingLastPathComponent().deletingLastPathComponent().path
    }

    static func outputDirectory(for directory: String) -> String {
        URL(fileURLWithPath: directory).standardizedFileURL.deletingLastPathComponent().path + "/.cache/cases"
    }

    /// The real recordings folder: $LIVENESS_RECORDINGS, or ../shared/recordings beside the package.
    public static func defaultRealDirectory(packageRoot: String) -> String? {
        if let env = ProcessInfo.processInfo.environment["LIVENESS_RECORDINGS"], !env.isEmpty { return env }
        let path = URL(fileURLWithPath: packageRoot).standardizedFileURL.deletingLastPathComponent().path + "/shared/recordings"
        return FileManager.default.fileExists(atPath: path + "/labels.json") ? path : nil
    }

    /// Renders the cases of `directory` that are missing or stale, with the generator of the
    /// package the folder belongs to. The photo's landmarks are found in-process (so no engine
    /// binary is needed) and handed to the generator.
    public static func generate(directory: String, model: LandmarkModel, log: (String) -> Void) throws(GenerationError) {
        let root = root(of: directory)
        let script = root + "/Tools/generate_cases.py"
        let photo = root + "/Recordings/.cache/astronaut.png"
        guard FileManager.default.fileExists(atPath: script) else { throw GenerationError(description: "no generator at \(script)") }
        guard FileManager.default.fileExists(atPath: photo) else {
            throw GenerationError(description: "no photo at \(photo): run Tools/setup.sh (it fetches the astronaut portrait)")
        }
        let landmarksPath = root + "/Recordings/.cache/astronaut-landmarks.json"
        if !FileManager.default.fileExists(atPath: landmarksPath) {
            do {
                let source = try FrameSource(path: photo)
                let session = try AnalysisSession(source: source, model: model, policy: LivenessPolicy(), seed: 1,
                                                  keepLandmarks: true, stopAtVerdict: false)
                var points: [Double]?
                _ = try session.run { step in if points == nil { points = step.record.landmarks } }
                guard let points else { throw GenerationError(description: "no face found on \(photo)") }
                let json = "{\"landmarks\": [" + points.map { String($0) }.joined(separator: ", ") + "]}\n"
                try AtomicFile.write(Array(json.utf8), to: landmarksPath)
            } catch let error as GenerationError {
                throw error
            } catch {
                throw GenerationError(description: "cannot find the photo's landmarks: \(error)")
            }
        }
        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, script, "--cases", directory, "--out", outputDirectory(for: directory),
                             "--photo", photo, "--landmarks", landmarksPath]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            throw GenerationError(description: "cannot run \(python): \(error); run Tools/setup.sh")
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw GenerationError(description: "the generator failed (\(python) \(script)); run Tools/setup.sh --test to install python3-opencv:\n" + output)
        }
        if let last = output.split(separator: "\n").last { log(String(last)) }
    }

    private final class WorkState: @unchecked Sendable {
        let lock = NSLock()
        var next = 0
        var cases: [(Int, CaseResult)] = []
        var reals: [(Int, RealClipResult)] = []
    }

    private enum Task: Sendable {
        case generated(RegressCase, source: String, recaptureOff: Bool)
        case real(RealClip)
    }

    /// Runs everything. Throws only when the generated cases cannot be produced.
    public func run(model: LandmarkModel, log: @escaping @Sendable (String) -> Void) throws {
        let clock = ContinuousClock()
        var start = clock.now
        var tasks: [Task] = []
        for directory in caseDirectories {
            if generate { try RegressSuite.generate(directory: directory, model: model, log: log) }
            for c in try RegressCase.load(directory: directory, outputDirectory: RegressSuite.outputDirectory(for: directory)) {
                for source in c.expectation.sources ?? ["video"] {
                    tasks.append(.generated(c, source: source, recaptureOff: false))
                    if c.expectation.withRecaptureOff != nil { tasks.append(.generated(c, source: source, recaptureOff: true)) }
                }
            }
        }
        generationSeconds = (clock.now - start).inSeconds
        if let realDirectory {
            var clips = try RealClip.load(directory: realDirectory)
            if let annotationsPath { clips = try RealClipAnnotations.apply(annotationsPath, to: clips) }
            if let blinkLabelsPath, let labels = try BlinkLabels.load(blinkLabelsPath) {
                clips = labels.apply(to: clips, directory: realDirectory)
                blinkLabelsMissing = labels.missingFiles(in: realDirectory)
            }
            for clip in clips { tasks.append(.real(clip)) }
        }
        // Longest first: the real clips are the long ones, the largest file of them first.
        func weight(_ task: Task) -> Int {
            guard case .real(let clip) = task else { return -1 }
            return ((try? FileManager.default.attributesOfItem(atPath: clip.path))?[.size] as? Int) ?? 0
        }
        let weights = tasks.map(weight)
        tasks = tasks.indices.sorted { (weights[$0], -$0) > (weights[$1], -$1) }.map { tasks[$0] }
        start = clock.now
        let state = WorkState()
        let group = DispatchGroup()
        let taskList = tasks
        for _ in 0..<max(1, min(jobs, tasks.count)) {
            group.enter()
            let thread = Thread {
                while true {
                    let index: Int = state.lock.withLock { defer { state.next += 1 }; return state.next }
                    guard index < taskList.count else { break }
                    switch taskList[index] {
                    case .generated(let c, let source, let recaptureOff):
                        let result = RegressSuite.runCase(c, source: source, recaptureOff: recaptureOff, model: model)
                        state.lock.withLock { state.cases.append((index, result)) }
                        log("\(result.status) \(c.name) [\(result.source)\(result.challenge == "passive" ? "" : ", " + result.challenge)]")
                    case .real(let clip):
                        let result = RealClipCheck.run(clip, model: model)
                        state.lock.withLock { state.reals.append((index, result)) }
                        log("\(result.ok ? "ok  " : "FAIL") \(clip.file)")
                    }
                }
                group.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        group.wait()
        caseResults = state.cases.sorted { ($0.1.name, $0.1.source) < ($1.1.name, $1.1.source) }.map(\.1)
        realResults = state.reals.sorted { $0.0 < $1.0 }.map(\.1).sorted { $0.file < $1.file }
        runSeconds = (clock.now - start).inSeconds
    }

    /// Runs case `c` with rotation `source`; with `recaptureOff`, with the recapture check off
    /// against `withRecaptureOff` (the row's source then reads `<source>,rc=0`).
    static func runCase(_ c: RegressCase, source: String, recaptureOff: Bool = false, model: LandmarkModel) -> CaseResult {
        let label = recaptureOff ? source + ",rc=0" : source
        var policy = LivenessPolicy()
        if recaptureOff { policy.recaptureCheck = 0 }
        let expectation = recaptureOff ? c.expectation.withRecaptureOff?.expectation : nil
        guard FileManager.default.fileExists(atPath: c.video) else {
            return CaseResult(name: c.name, source: label, expected: c.expectation.verdict, got: "missing",
                              mismatches: ["no video at \(c.video): run Tools/setup.sh or Tools/generate_cases.py"], faceFraction: 0)
        }
        let truth = FileManager.default.contents(atPath: c.truthPath).flatMap { try? JSONDecoder().decode(CaseTruth.self, from: $0) }
        guard ["video", "sensor", "none"].contains(source) else {
            return CaseResult(name: c.name, source: label, expected: c.expectation.verdict, got: "error",
                              mismatches: ["unknown rotation source '\(source)' in expected.json (video, sensor or none)"], faceFraction: 0)
        }
        do {
            // A prompted case (its output holds the generator's prompt log): signed here, verified
            // by PromptLog.parse, and judged with challengeMode prompted against the log's plan.
            var promptLog: GeneratedPromptLog.Signed?
            if FileManager.default.fileExists(atPath: c.promptLogPath) {
                promptLog = try GeneratedPromptLog.sign(path: c.promptLogPath)
                policy.challengeMode = .prompted
            }
            let run = try RecordingRun.analyse(path: c.video, motion: source == "sensor" ? c.motionPath : nil, model: model,
                                               policy: policy, estimateFromVideo: source == "video", plan: promptLog?.log.plan)
            return CaseCheck.check(c, source: label, run: run, truth: truth, expectation: expectation, promptLog: promptLog)
        } catch {
            return CaseResult(name: c.name, source: label, expected: c.expectation.verdict, got: "error",
                              mismatches: ["\(error)"], faceFraction: 0)
        }
    }


    /// True when every case and every real clip gave its expected outcome.
    public var passed: Bool { caseResults.allSatisfy(\.ok) && realResults.allSatisfy(\.ok) }

    /// The report: a table per part, the measured figures, blink precision/recall.
    public func report() -> String {
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func f1(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "-" }
        var out = "GENERATED CASES\n"
        // Columns as wide as their longest entry (a prompted case's outcomes run long).
        let nameWidth = max(30, (caseResults.map(\.name.count).max() ?? 0) + 1)
        let sourceWidth = max(8, (caseResults.map(\.source.count).max() ?? 0) + 1)
        let summaryWidth = max(30, (caseResults.flatMap { [$0.expected.count, $0.got.count] }.max() ?? 0) + 1)
        out += pad("case", nameWidth) + pad("source", sourceWidth) + pad("expected", summaryWidth) + pad("got", summaryWidth) + pad("ok", 6)
            + pad("face%", 7) + pad("yawErr°", 9) + pad("yawBias°", 10) + pad("sightErr°", 11) + pad("sightBias°", 12)
            + "rot truth/est °/s\n"
        for r in caseResults {
            let rot = r.rotationTruthDegreesPerSecond.map { "\(f1($0))/\(f1(r.rotationEstimateDegreesPerSecond))" } ?? "-"
            out += pad(r.name, nameWidth) + pad(r.source, sourceWidth) + pad(r.expected, summaryWidth) + pad(r.got, summaryWidth) + pad(r.status, 6)
                + pad(String(format: "%.0f", r.faceFraction * 100), 7) + pad(f1(r.yawMeanAbsError), 9) + pad(f1(r.yawBiasDegrees), 10)
                + pad(f1(r.lineOfSightYawMeanAbsError), 11) + pad(f1(r.lineOfSightYawBiasDegrees), 12) + rot + "\n"
            for m in r.mismatches { out += "    - \(m)\n" }
            for d in r.details { out += "    \(d)\n" }
            if let k = r.knownIssue { out += r.mismatches.isEmpty ? "    known issue did not show this time: \(k)\n" : "    KNOWN ISSUE: \(k)\n" }
        }
        let bad = caseResults.filter { !$0.ok }.count
        let known = caseResults.filter { $0.status == "KNOWN" }.count
        let prompted = caseResults.filter { $0.challenge == "prompted" }.count
        if prompted > 0 {
            out += "P: the outcome of each prompt shown (F followed, W wrongDirection, A wrongAction, E anticipated, M missed, . pending)\n"
        }
        out += "\(caseResults.count - bad - known) of \(caseResults.count) generated runs ok (\(prompted) judged prompted), \(known) differ through a known engine issue, \(bad) fail\n"
        if realDirectory == nil {
            out += "\nREAL CLIPS: skipped (no ../shared/recordings beside the package; set LIVENESS_RECORDINGS to a folder with labels.json)\n"
            return out
        }
        out += "\nREAL CLIPS (\(realDirectory!))\n"
        out += pad("clip", 34) + pad("must", 60) + pad("got", 60) + "ok\n"
        for r in realResults {
            out += pad(r.file, 34) + pad(r.expected, 60) + pad(r.got, 60) + (r.ok ? "ok" : "FAIL") + "\n"
            for m in r.mismatches { out += "    - \(m)\n" }
            for m in r.targetsMissed { out += "    target not reached yet: \(m)\n" }
            if !r.labelled.isEmpty || !r.episodes.isEmpty {
                func times(_ v: [Double]) -> String { v.isEmpty ? "none" : v.map { String(format: "%.2f", $0) }.joined(separator: ", ") + " s" }
                out += "    blinks: \(r.episodes.count) episodes, \(r.matchedEpisodesAnnotated) match a blink or wink; unmatched at \(times(r.falseEpisodes)); missed \(times(r.missedBlinks))\n"
            }
            if let s = r.projectBlinkScore {
                func times(_ v: [BlinkLabels.Interval]) -> String {
                    v.isEmpty ? "none" : v.map { String(format: "%.2f", $0.start) }.joined(separator: ", ") + " s"
                }
                out += "    project blink labels: TP/FP/FN \(s.truePositives)/\(s.falsePositives)/\(s.falseNegatives)"
                    + String(format: ", %.1f false a minute", s.falsePerMinute ?? 0)
                    + "; false at \(times(s.falseEvents)); missed \(times(s.missed))\n"
            }
        }
        for (title, subset) in [("all labelled clips", realResults.filter { !$0.labelled.isEmpty || !$0.episodes.isEmpty }),
                                ("clips whose labels were checked by eye", realResults.filter { $0.checked })] {
            let episodes = subset.map(\.episodes.count).reduce(0, +)
            let labels = subset.map(\.labelled.count).reduce(0, +)
            let tp = subset.map(\.matchedEpisodes).reduce(0, +)
            let hit = subset.map(\.matchedLabels).reduce(0, +)
            let precision = episodes == 0 ? 1 : Double(tp) / Double(episodes)
            let recall = labels == 0 ? 1 : Double(hit) / Double(labels)
            out += String(format: "blink precision %.2f (%d of %d blink episodes), recall %.2f (%d of %d labelled blinks, ±0.2 s)",
                          precision, tp, episodes, recall, hit, labels) + " on \(title)\n"
            // The same with the project's annotations: an episode on an annotated wink is a blink
            // by the spec's mean-closure rule; blinks labels.json lacks are added to those to find.
            let added = subset.map(\.annotatedBlinks.count).reduce(0, +)
            let tpA = subset.map(\.matchedEpisodesAnnotated).reduce(0, +)
            let hitA = subset.map(\.matchedLabelsAnnotated).reduce(0, +)
            let precisionA = episodes == 0 ? 1 : Double(tpA) / Double(episodes)
            let recallA = labels + added == 0 ? 1 : Double(hitA) / Double(labels + added)
            out += String(format: "  with the project's annotations (winks count as blinks; blinks added: %d): precision %.2f (%d of %d), recall %.2f (%d of %d)",
                          added, precisionA, tpA, episodes, recallA, hitA, labels + added) + "\n"
        }
        out += projectBlinkReport()
        return out
    }

    /// The blink line against the project's labels (`BlinkLabels`): all labelled clips together,
    /// and the clip with the most false events a minute.
    func projectBlinkReport() -> String {
        let scored = realResults.compactMap { r in r.projectBlinkScore.map { (r.file, $0) } }
        guard !scored.isEmpty else { return "" }
        let total = BlinkScore.total(scored.map(\.1))
        func ratio(_ v: Double?) -> String { v.map { String(format: "%.2f", $0) } ?? "-" }
        var out = "blinks against the project's labels (Recordings/blink-labels.json; \(scored.count) clips, "
            + String(format: "%.1f min, whole clips, ±0.2 s): ", total.seconds / 60)
            + "precision \(ratio(total.precision)) (\(total.truePositives) of \(total.truePositives + total.falsePositives) episodes), "
            + "recall \(ratio(total.recall)) (\(total.truePositives) of \(total.truePositives + total.falseNegatives) blinks)"
            + String(format: ", %.2f false a minute", total.falsePerMinute ?? 0)
        if let worst = scored.max(by: { ($0.1.falsePerMinute ?? 0) < ($1.1.falsePerMinute ?? 0) }), worst.1.falsePositives > 0 {
            out += " (most: \(worst.0), " + String(format: "%.1f)", worst.1.falsePerMinute ?? 0)
        }
        out += "\n"
        if !blinkLabelsMissing.isEmpty {
            out += "  labelled clips not in the folder, not scored: \(blinkLabelsMissing.joined(separator: ", "))\n"
        }
        return out
    }
}
