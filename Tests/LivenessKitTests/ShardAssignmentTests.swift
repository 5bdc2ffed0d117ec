import LivenessCommands
import LivenessBatch
import LivenessKit
import TestSupport
import XCTest

/// `--shard I/N` and `--shard auto` resolved from schedulers' environments. The Slurm
/// environments are those Slurm 22.05 (Debian 12) gave the tasks of `sbatch --array=...`
/// (recorded from a real array job); SlurmArrayTests runs the whole path on a real Slurm.
final class ShardAssignmentTests: XCTestCase {
    /// What Slurm sets in task `id` of an array with these ids (SLURM_ARRAY_TASK_STEP is 1 for
    /// a list that is not a range, as Slurm does).
    static func slurm(_ id: Int, ids: [Int], step: Int = 1, job: Int = 17) -> [String: String] {
        ["SLURM_JOB_ID": "\(job + ids.firstIndex(of: id)!)", "SLURM_ARRAY_JOB_ID": "\(job)",
         "SLURM_ARRAY_TASK_ID": "\(id)", "SLURM_ARRAY_TASK_COUNT": "\(ids.count)",
         "SLURM_ARRAY_TASK_MIN": "\(ids.min()!)", "SLURM_ARRAY_TASK_MAX": "\(ids.max()!)",
         "SLURM_ARRAY_TASK_STEP": "\(step)"]
    }

    private func resolve(_ environment: [String: String], file: StaticString = #filePath, line: UInt = #line) -> (Int, Int)? {
        do {
            let shard = try ShardAssignment.fromScheduler(environment)
            return (shard.index, shard.count)
        } catch {
            XCTFail("\(environment): \(error)", file: file, line: line)
            return nil
        }
    }

    /// The error message, or a failure when the environment resolved.
    private func refusal(_ environment: [String: String], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let shard = try ShardAssignment.fromScheduler(environment)
            XCTFail("\(environment) resolved to \(shard.index)/\(shard.count)", file: file, line: line)
            return ""
        } catch {
            return error.description
        }
    }

    // MARK: - Slurm

    func testSlurmArraysFromZeroFromOneAndWithAStepGiveEachTaskItsPosition() {
        for (ids, step) in [(Array(0...3), 1), (Array(1...4), 1), ([0, 5, 10, 15], 5), (Array(7...7), 1)] {
            let shards = ids.compactMap { resolve(Self.slurm($0, ids: ids, step: step)) }
            XCTAssertEqual(shards.map(\.0), Array(0..<ids.count), "array \(ids)")
            XCTAssertTrue(shards.allSatisfy { $0.1 == ids.count }, "array \(ids)")
        }
    }

    func testEveryRegularSlurmArrayIsABijectionOntoItsShards() {
        for count in 1...9 {
            for min in [0, 1, 3, 100] {
                for step in [1, 2, 7] {
                    let ids = (0..<count).map { min + $0 * step }
                    let shards = ids.compactMap { resolve(Self.slurm($0, ids: ids, step: step)) }
                    XCTAssertEqual(shards.map(\.0).sorted(), Array(0..<count), "\(ids)")
                    XCTAssertEqual(Set(shards.map(\.1)), [count], "\(ids)")
                }
            }
        }
    }

    func testASlurmArrayThatIsNotARangeIsRefused() {
        // sbatch --array=1,3,4,9: min 1, max 9, step 1, 4 tasks. Ids say nothing about shards.
        let message = refusal(Self.slurm(3, ids: [1, 3, 4, 9]))
        XCTAssertTrue(message.contains("evenly spaced"), message)
        XCTAssertTrue(message.contains("LIVENESS_SHARD_COUNT"), message)
    }

    func testASlurmTaskIdOutsideItsArrayIsRefused() {
        var environment = Self.slurm(2, ids: Array(0...3))
        environment["SLURM_ARRAY_TASK_ID"] = "4"
        XCTAssertTrue(refusal(environment).contains("SLURM_ARRAY_TASK_ID=4 is not one of the 4 tasks"))
        environment["SLURM_ARRAY_TASK_ID"] = "0"
        environment["SLURM_ARRAY_TASK_MIN"] = "1"
        XCTAssertTrue(refusal(environment).contains("SLURM_ARRAY_TASK_ID=0"))
        // Off the step: ids 0, 5, 10, 15 and a task 6.
        var stepped = Self.slurm(5, ids: [0, 5, 10, 15], step: 5)
        stepped["SLURM_ARRAY_TASK_ID"] = "6"
        XCTAssertTrue(refusal(stepped).contains("SLURM_ARRAY_TASK_ID=6"))
    }

    func testMissingOrMalformedSlurmVariablesAreNamed() {
        var environment = Self.slurm(1, ids: Array(0...3))
        environment["SLURM_ARRAY_TASK_COUNT"] = nil
        XCTAssertTrue(refusal(environment).contains("SLURM_ARRAY_TASK_COUNT is not"))
        environment["SLURM_ARRAY_TASK_COUNT"] = "0"
        XCTAssertTrue(refusal(environment).contains("SLURM_ARRAY_TASK_COUNT=0 is below 1"))
        environment["SLURM_ARRAY_TASK_COUNT"] = "four"
        XCTAssertTrue(refusal(environment).contains("SLURM_ARRAY_TASK_COUNT='four' is not a whole number"))
        environment["SLURM_ARRAY_TASK_COUNT"] = "4"
        environment["SLURM_ARRAY_TASK_ID"] = "-1"
        XCTAssertTrue(refusal(environment).contains("SLURM_ARRAY_TASK_ID=-1 is below 0"))
    }

    func testAPlainSlurmJobIsNotAnArrayTask() {
        let message = refusal(["SLURM_JOB_ID": "14", "SLURM_JOB_NAME": "liveness"])
        XCTAssertTrue(message.contains("Slurm job 14 is not an array job"), message)
        XCTAssertTrue(message.contains("--array"), message)
    }

    func testAPinnedCountMakesSlurmTaskIdsShardNumbersSoASubsetCanBeSubmittedAgain() {
        // The first submission, --array=0-3, and later --array=2 alone to redo shard 2 of 4.
        for id in 0...3 {
            let shard = resolve(Self.slurm(id, ids: Array(0...3)).merging(["LIVENESS_SHARD_COUNT": "4"]) { $1 })
            XCTAssertEqual(shard?.0, id)
            XCTAssertEqual(shard?.1, 4)
        }
        let again = resolve(Self.slurm(2, ids: [2]).merging(["LIVENESS_SHARD_COUNT": "4"]) { $1 })
        XCTAssertEqual(again?.0, 2)
        XCTAssertEqual(again?.1, 4)
        // Without the pin, a one-task array is a batch of one shard: the task takes everything.
        XCTAssertEqual(resolve(Self.slurm(2, ids: [2]))?.1, 1)
    }

    func testAPinnedCountRefusesArraysThatDoNotNumberShards() {
        let pin = ["LIVENESS_SHARD_COUNT": "4"]
        // More tasks than shards.
        XCTAssertTrue(refusal(Self.slurm(1, ids: Array(0...4)).merging(pin) { $1 }).contains("5 tasks"))
        // A full array numbered 1-4: every task refuses, not only task 4.
        for id in 1...4 {
            XCTAssertTrue(refusal(Self.slurm(id, ids: Array(1...4)).merging(pin) { $1 }).contains("runs ids 1-4"))
        }
        // A subset with an id past the count.
        XCTAssertTrue(refusal(Self.slurm(5, ids: [5]).merging(pin) { $1 }).contains("SLURM_ARRAY_TASK_ID=5 is not a shard"))
        XCTAssertTrue(refusal(Self.slurm(0, ids: [0]).merging(["LIVENESS_SHARD_COUNT": "0"]) { $1 }).contains("LIVENESS_SHARD_COUNT=0"))
    }

    // MARK: - Kubernetes

    func testKubernetesIndexedJobTakesTheCountFromTheManifest() {
        let environment = ["JOB_COMPLETION_INDEX": "3", "LIVENESS_SHARD_COUNT": "8", "KUBERNETES_SERVICE_HOST": "10.96.0.1"]
        XCTAssertEqual(resolve(environment)?.0, 3)
        XCTAssertEqual(resolve(environment)?.1, 8)
        var withoutCount = environment
        withoutCount["LIVENESS_SHARD_COUNT"] = nil
        XCTAssertTrue(refusal(withoutCount).contains(".spec.completions"))
        var beyond = environment
        beyond["JOB_COMPLETION_INDEX"] = "8"
        XCTAssertTrue(refusal(beyond).contains("JOB_COMPLETION_INDEX=8 is not below LIVENESS_SHARD_COUNT=8"))
        XCTAssertTrue(refusal(["KUBERNETES_SERVICE_HOST": "10.96.0.1"]).contains("completionMode: Indexed"))
    }

    // MARK: - AWS Batch

    func testAWSBatchArrayChildUsesItsIndexAndSize() {
        let environment = ["AWS_BATCH_JOB_ID": "abc:2", "AWS_BATCH_JOB_ARRAY_INDEX": "2", "AWS_BATCH_JOB_ARRAY_SIZE": "5"]
        XCTAssertEqual(resolve(environment)?.0, 2)
        XCTAssertEqual(resolve(environment)?.1, 5)
        // An agent without the size variable: the job definition gives the count.
        XCTAssertEqual(resolve(["AWS_BATCH_JOB_ARRAY_INDEX": "2", "LIVENESS_SHARD_COUNT": "5"])?.1, 5)
        XCTAssertTrue(refusal(["AWS_BATCH_JOB_ARRAY_INDEX": "2"]).contains("AWS_BATCH_JOB_ARRAY_SIZE"))
        XCTAssertTrue(refusal(environment.merging(["LIVENESS_SHARD_COUNT": "4"]) { $1 }).contains("AWS_BATCH_JOB_ARRAY_SIZE=5 but LIVENESS_SHARD_COUNT=4"))
        XCTAssertTrue(refusal(environment.merging(["AWS_BATCH_JOB_ARRAY_INDEX": "5"]) { $1 }).contains("not below the array's size 5"))
        XCTAssertTrue(refusal(["AWS_BATCH_JOB_ID": "abc"]).contains("not a child of an array job"))
    }

    // MARK: - Several or none

    func testTwoSchedulersMustAgree() {
        let slurm = Self.slurm(2, ids: Array(1...4))  // shard 1 of 4
        let agreeing = slurm.merging(["AWS_BATCH_JOB_ARRAY_INDEX": "1", "AWS_BATCH_JOB_ARRAY_SIZE": "4"]) { $1 }
        XCTAssertEqual(resolve(agreeing)?.0, 1)
        // Slurm's task 2 of 0-3 is shard 2 of 4; the Kubernetes index says 3.
        let message = refusal(Self.slurm(2, ids: Array(0...3)).merging(["JOB_COMPLETION_INDEX": "3", "LIVENESS_SHARD_COUNT": "4"]) { $1 })
        XCTAssertTrue(message.contains("disagree"), message)
        XCTAssertTrue(message.contains("Slurm") && message.contains("Kubernetes"), message)
    }

    func testNoSchedulerIsAClearError() {
        let message = refusal(["HOME": "/root", "LIVENESS_SHARD_COUNT": "4"])
        XCTAssertTrue(message.contains("SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX"), message)
        XCTAssertTrue(message.contains("--shard I/N"), message)
    }

    // MARK: - The option

    func testTheOptionTakesIOverNOrAuto() throws {
        let shard = try ShardAssignment(argument: "2/3", environment: Self.slurm(1, ids: [0, 1]))
        XCTAssertEqual([shard.index, shard.count], [2, 3], "I/N ignores the scheduler")
        let auto = try ShardAssignment(argument: "auto", environment: Self.slurm(1, ids: [0, 1]))
        XCTAssertEqual([auto.index, auto.count], [1, 2])
        for bad in ["3/3", "-1/3", "1/0", "a/2", "1/2/3", "1", "", "/", "AUTO", " 1/2"] {
            XCTAssertThrowsError(try ShardAssignment(argument: bad, environment: [:]), "'\(bad)'")
        }
    }

    func testAnalyzeSaysWhyAutoFoundNoShard() throws {
        let environment = ProcessInfo.processInfo.environment
        if ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"].contains(where: { environment[$0] != nil }) {
            throw Skip.unavailable("the tests run inside an array task; analyze --shard auto would find it")
        }
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["analyze", "/nonexistent.mp4", "--shard", "auto", "--output", "/nonexistent"], console: console), 2)
        XCTAssertTrue(console.errors.contains("--shard auto:"), console.errors)
        XCTAssertEqual(console.printed, "")
    }
}
