import FaceTracking
import Foundation
import LivenessCore
import LivenessEvidence
import TestSupport
import XCTest

@testable import LivenessKit
@testable import LivenessRegress

/// The generated prompted cases (Recordings/cases/prompted-*) end to end: the generator's
/// unsigned prompt log is exactly a `PromptLog` body, the regression harness signs it, verifies it
/// and judges the clip prompted against it. Oracle: the generator's truth (truth.json `prompts`:
/// when each prompt was shown, when the head started to answer, the exact time its yaw crossed
/// 3.75°, when the lids were shut) and its per-frame yaw. Rendered like the rest of the suite
/// (`RegressSuite.generate`, stale cases re-rendered); skips only when they cannot be produced.
final class PromptedCasesTests: XCTestCase {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var prepared: (model: LandmarkModel, cases: [RegressCase])?

    private var casesDirectory: String { Fixtures.packageRoot.appendingPathComponent("Recordings/cases").path }

    /// The model and the prompted cases, rendered once for the class.
    private func prepare() throws -> (model: LandmarkModel, cases: [RegressCase]) {
        try Self.lock.withLock {
            if let prepared = Self.prepared { return prepared }
            let model = try LandmarkModel.load()
            do {
                try RegressSuite.generate(directory: casesDirectory, model: model) { _ in }
            } catch {
                throw Skip.unavailable("the generated cases cannot be produced: \(error)")
            }
            let all = try RegressCase.load(directory: casesDirectory,
                                           outputDirectory: Fixtures.packageRoot.appendingPathComponent("Recordings/.cache/cases").path)
            let prepared = (model, all.filter { $0.name.hasPrefix("prompted-") })
            Self.prepared = prepared
            return prepared
        }
    }

    private func truth(_ c: RegressCase) throws -> (frames: [CaseTruth.Frame], prompts: PromptsTruth) {
        let truth = try JSONDecoder().decode(CaseTruth.self, from: Data(contentsOf: URL(fileURLWithPath: c.truthPath)))
        return (truth.frames, try XCTUnwrap(truth.prompts, "\(c.name): truth.json has no prompts"))
    }

    private func judge(_ c: RegressCase, model: LandmarkModel) throws -> RecordingRun {
        let signed = try GeneratedPromptLog.sign(path: c.promptLogPath)
        var policy = LivenessPolicy()
        policy.challengeMode = .prompted
        return try RecordingRun.analyse(path: c.video, motion: nil, model: model, policy: policy, plan: signed.log.plan)
    }

    /// The first frame on which the generator's exact yaw is turned by `onsetDegrees` (3.75°) to
    /// the answer's side: where the engine should date the turn's onset (it reads the unfiltered
    /// yaw back from its filtered stretch; docs/prompted-challenge.md).
    private func trueOnset(frames: [CaseTruth.Frame], answer: PromptsTruth.Answer) -> Double? {
        answer.onsetFrame.map { frames[$0].t }
    }

    func testAHeadThatFollowsThreePromptsPassesWithTheTruthsReactionTimes() throws {
        let (model, cases) = try prepare()
        let c = try XCTUnwrap(cases.first { $0.name == "prompted-follows" })
        let (frames, truth) = try truth(c)
        let run = try judge(c, model: model)
        let records = run.evidence.promptedChallenge.prompts
        XCTAssertEqual(run.verdict.status, .passed)
        XCTAssertEqual(run.evidence.promptedChallenge.mode, .prompted)
        XCTAssertEqual(run.evidence.promptedChallenge.source, "log")
        XCTAssertEqual(records.map(\.outcome), [.followed, .followed, .followed])
        XCTAssertEqual(records.map(\.step.rawValue), truth.shown.map(\.step))
        let frameSeconds = 1.0 / 30
        for (record, shown) in zip(records, truth.shown) {
            // Shown on the frame the log names, timed as logged.
            XCTAssertEqual(Double(record.promptMicroseconds) / 1e6, try XCTUnwrap(shown.t), accuracy: 1e-6)
            XCTAssertEqual(record.promptFrameIndex, shown.frame)
            let answer = try XCTUnwrap(truth.answers.first { $0.index == shown.index })
            let reaction = try XCTUnwrap(record.reactionSeconds)
            let began = try XCTUnwrap(record.responseMicroseconds).seconds
            if shown.step == "blink" {
                // Credited on the frame the measured closure reaches 0.22: after the lids start
                // to close, by the frame after they are shut.
                let frame = try XCTUnwrap(record.responseFrameIndex)
                XCTAssertGreaterThanOrEqual(frame, try XCTUnwrap(answer.startFrame), "blink \(record)")
                XCTAssertLessThanOrEqual(frame, try XCTUnwrap(answer.closedFrame) + 1, "blink \(record)")
            } else {
                // The true onset is 0.5625 s after the prompt; the engine dates it within one
                // frame of the first frame at or after it (the median filter's lag is taken back).
                XCTAssertEqual(try XCTUnwrap(answer.onsetReaction), 0.5625, accuracy: 1e-6)
                let expected = try XCTUnwrap(trueOnset(frames: frames, answer: answer))
                XCTAssertEqual(began, expected, accuracy: frameSeconds + 1e-3, "\(shown.step): began \(began) s, true onset on the frame at \(expected) s")
                XCTAssertEqual(reaction, expected - shown.t!, accuracy: frameSeconds + 1e-3)
            }
        }
    }

    func testEveryPromptedCaseIsJudgedPromptedWithItsExpectedOutcomesAndTruthfulOnsets() throws {
        let (model, cases) = try prepare()
        XCTAssertGreaterThanOrEqual(cases.count, 4, "the prompted cases are missing")
        for c in cases {
            let result = RegressSuite.runCase(c, source: "video", model: model)
            XCTAssertEqual(result.challenge, "prompted", c.name)
            XCTAssertTrue(result.details.first?.hasPrefix("judged prompted (plan source log)") == true, "\(c.name): \(result.details)")
            XCTAssertTrue(result.ok, "\(c.name): \(result.mismatches)")
            XCTAssertEqual(result.status, c.expectation.knownIssue == nil ? "ok" : "KNOWN", "\(c.name): \(result.mismatches)")
            XCTAssertNotNil(c.expectation.prompts, "\(c.name): expected.json must name the prompt outcomes")

            // Every turn the engine took as an answer began where the truth's exact yaw crosses
            // 3.75° (within one frame).
            let (frames, truth) = try truth(c)
            let run = try judge(c, model: model)
            XCTAssertEqual(run.frames.count, frames.count, c.name)
            for record in run.evidence.promptedChallenge.prompts {
                guard let began = record.responseMicroseconds, let frame = record.responseFrameIndex,
                      let answer = truth.answers.first(where: { $0.index == record.index }),
                      answer.did != "blink", answer.did != "none" else { continue }
                XCTAssertEqual(run.frames[frame].seconds, Double(frame) / 30, accuracy: 1e-3)
                let expected = try XCTUnwrap(trueOnset(frames: frames, answer: answer), "\(c.name) answer \(answer.index)")
                XCTAssertEqual(began.seconds, expected, accuracy: 1.0 / 30 + 1e-3, "\(c.name) prompt \(record.index)")
            }
        }
    }

    func testTheGeneratedLogIsAPromptLogBodyAndItsTruthMatchesItsFrames() throws {
        let (_, cases) = try prepare()
        for c in cases {
            let bytes = try XCTUnwrap(FileManager.default.contents(atPath: c.promptLogPath), c.name)
            let (frames, truth) = try truth(c)
            XCTAssertEqual(truth.session, c.name)
            let log = PromptLog(session: c.name, prompts: try truth.shown.map { shown in
                (step: try XCTUnwrap(PromptStep(rawValue: shown.step)), promptMicroseconds: shown.t.map { Int64(($0 * 1e6).rounded()) })
            })
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), String(decoding: log.body, as: UTF8.self), c.name)
            // The harness's signature is PromptLog's own, and counts only for its key.
            let signed = try GeneratedPromptLog.sign(path: c.promptLogPath)
            XCTAssertEqual(signed.log, log)
            XCTAssertThrowsError(try PromptLog.parse(signed.bytes, path: c.promptLogPath, trusted: [try SigningKey.generate().publicKey]))
            XCTAssertThrowsError(try PromptLog.parse(Array(bytes), path: c.promptLogPath, trusted: [signed.key]), "an unsigned log")
            // The truth's onsets are where its own frames cross 3.75°.
            for answer in truth.answers {
                guard let onset = answer.onset, let k = answer.onsetFrame else { continue }
                let sign: Double = answer.did == "turnLeft" ? 1 : -1
                XCTAssertGreaterThanOrEqual(frames[k].t, onset - 1e-6)
                XCTAssertGreaterThanOrEqual(sign * frames[k].yaw, truth.onsetDegrees - 1e-3, "\(c.name) answer \(answer.index)")
                XCTAssertLessThan(sign * frames[k - 1].yaw, truth.onsetDegrees, "\(c.name) answer \(answer.index)")
            }
        }
    }

    func testTheReplayedRecordingsAreTheFollowingHeadsFrames() throws {
        let (_, cases) = try prepare()
        let follows = try XCTUnwrap(cases.first { $0.name == "prompted-follows" })
        let replays = cases.filter { $0.name.hasPrefix("prompted-replay-") }
        XCTAssertFalse(replays.isEmpty)
        let video = try Data(contentsOf: URL(fileURLWithPath: follows.video))
        for c in replays {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: c.video)), video, "\(c.name) must be the recording of prompted-follows")
            let (_, truth) = try truth(c)
            XCTAssertFalse(truth.follow)
            XCTAssertTrue(truth.answers.isEmpty)
            XCTAssertNotEqual(try XCTUnwrap(FileManager.default.contents(atPath: c.promptLogPath)),
                              try XCTUnwrap(FileManager.default.contents(atPath: follows.promptLogPath)))
        }
    }
}

private extension Int64 {
    var seconds: Double { Double(self) / 1e6 }
}
