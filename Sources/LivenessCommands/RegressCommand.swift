import FaceTracking
import Foundation
import LivenessKit
import LivenessRegress

/// `liveness regress`: the regression suite over the generated cases and the labelled real clips.
package enum RegressCommand {
    package static let spec = CommandSpec(
        name: "regress",
        overview: "Run the regression suite: generated cases with expected outcomes, and the labelled real clips.",
        summary: "Run the regression suite: generated cases and labelled real clips.",
        arguments: [("<dir>...", "Folders of case folders with recipe.json and expected.json (default: Recordings/cases).")],
        options: [
            .option("--jobs", "N", "Worker threads (default: the number of cores)."),
            .option("--recordings", "DIR", "The real clips with labels.json (default: $LIVENESS_RECORDINGS or ../shared/recordings)."),
            .option("--blink-labels", "FILE", "Blink labels of the real clips, scored whole clip (default: Recordings/blink-labels.json; docs/blinks.md has the format)."),
            .flag("--no-real", "Skip the real clips."),
            .flag("--no-generate", "Do not render missing or stale cases (Tools/generate_cases.py)."),
        ],
        positionalCount: 0...64)

    /// Runs the suite; returns 0 when everything matched, 1 on any mismatch, 2 on a usage error
    /// or when the cases cannot be produced.
    package static func run(_ arguments: [String], console: Console) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        let jobs: Int
        do {
            jobs = try parsed.integer("--jobs", in: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        } catch {
            return console.usageError(error, spec: spec)
        }
        let cwd = FileManager.default.currentDirectoryPath
        let directories = parsed.positionals.isEmpty ? [cwd + "/Recordings/cases"] : parsed.positionals
        for d in directories where !FileManager.default.fileExists(atPath: d) {
            return console.usageError(UsageError("no case folder at \(d) (run from the package root or name the folder)"), spec: spec)
        }
        for d in directories {
            let cases = (try? FileManager.default.contentsOfDirectory(atPath: d)) ?? []
            if !cases.contains(where: { FileManager.default.fileExists(atPath: d + "/" + $0 + "/expected.json") }) {
                console.error("error: \(Console.printable(d)): no regression cases here (folders with recipe.json and expected.json)")
                return 2
            }
        }
        let real: String? = parsed.has("--no-real") ? nil
            : parsed.value("--recordings") ?? RegressSuite.defaultRealDirectory(packageRoot: RegressSuite.root(of: directories[0]))
        let suite = RegressSuite(caseDirectories: directories, realDirectory: real)
        if let labels = parsed.value("--blink-labels") {
            guard FileManager.default.fileExists(atPath: labels) else {
                return console.usageError(UsageError("no blink labels at \(labels)"), spec: spec)
            }
            suite.blinkLabelsPath = labels
        }
        suite.jobs = jobs
        suite.generate = !parsed.has("--no-generate")
        do {
            let model = try LandmarkModel.load()
            let quiet = !console.isTerminal
            try suite.run(model: model) { line in if !quiet { console.error(line) } }
        } catch {
            console.error("error: \(error)")
            return 2
        }
        console.out(suite.report())
        console.out(String(format: "regress: cases ready in %.1f s, suite ran in %.1f s with %d jobs: ", suite.generationSeconds,
                           suite.runSeconds, jobs) + (suite.passed ? "all ok" : "MISMATCH"))
        return suite.passed ? 0 : 1
    }
}
