/// Which share of a batch one process takes (`analyze --shard`): `I/N` given on the command
/// line, or `auto`, found in the environment that a cluster scheduler gives each task of an
/// array job. The share itself is `InputList.shard(_:of:)` (a hash of each input path), so a
/// task that is run again takes the same inputs, and N tasks together take every input once.
///
/// `auto` reads, on each scheduler's own conventions:
/// - Slurm array jobs: `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`, `SLURM_ARRAY_TASK_MIN`,
///   `SLURM_ARRAY_TASK_STEP`, `SLURM_ARRAY_TASK_MAX`. The shard is the task's position in the
///   array: tasks 1-4 (`--array=1-4`) or 0,5,10,15 (`--array=0-15:5`) are shards 0-3 of 4. An
///   array whose ids are not an evenly spaced range (`--array=1,3,4,9`) is refused.
/// - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX`. Kubernetes does not give pods the
///   completion count, so the pod template sets `LIVENESS_SHARD_COUNT` to `.spec.completions`.
/// - AWS Batch array jobs: `AWS_BATCH_JOB_ARRAY_INDEX` and `AWS_BATCH_JOB_ARRAY_SIZE` (or
///   `LIVENESS_SHARD_COUNT` where the agent does not set the size).
///
/// `LIVENESS_SHARD_COUNT` also pins the count of a Slurm array; the task id is then the shard
/// number itself (0 to N-1), so that a subset of the shards can be submitted again on its own
/// (`sbatch --array=2,3` with `LIVENESS_SHARD_COUNT=4` redoes shards 2 and 3 of 4).
///
/// Resolution is a pure function of the environment given; every inconsistency (an index out
/// of range, a count of 0, a number that is not one, two schedulers that disagree) is an error
/// that names the variables, never a silent guess.
public struct ShardAssignment: Equatable, Sendable {
    /// The shard taken, `0 ..< count`.
    public var index: Int
    /// How many shards the batch is split into (at least 1).
    public var count: Int
    /// Where `index` and `count` came from, for the task's log (e.g. "Slurm array job 17, task 3
    /// (SLURM_ARRAY_TASK_ID=3 in 1-4)").
    public var source: String

    /// The variable that gives the number of shards where the scheduler does not (Kubernetes),
    /// or pins it (a Slurm array submitted again in part).
    public static let countVariable = "LIVENESS_SHARD_COUNT"

    public init(index: Int, count: Int, source: String) {
        self.index = index
        self.count = count
        self.source = source
    }

    /// The value of `--shard`: `I/N` with `0 <= I < N`, or `auto` (see `fromScheduler`).
    public init(argument: String, environment: [String: String]) throws(ShardError) {
        if argument == "auto" {
            self = try Self.fromScheduler(environment)
            return
        }
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count > 0, (0..<count).contains(index) else {
            throw ShardError("--shard needs I/N with 0 <= I < N, or auto (from the scheduler's array job), not '\(argument)'")
        }
        self.init(index: index, count: count, source: "the command line")
    }

    /// The shard of the array task that started this process, from `environment` (the process's
    /// environment in `analyze`). Throws when no scheduler's array variables are there, when
    /// they are inconsistent, or when two schedulers' variables give different shards.
    public static func fromScheduler(_ environment: [String: String]) throws(ShardError) -> ShardAssignment {
        let reader = EnvironmentReader(environment: environment)
        let pinned = try reader.number(countVariable, atLeast: 1)
        let found = try [slurm(reader, pinned: pinned), kubernetes(reader, pinned: pinned), awsBatch(reader, pinned: pinned)]
            .compactMap { $0 }
        guard let first = found.first else {
            throw ShardError(notAnArrayTask(environment))
        }
        if let other = found.first(where: { $0.index != first.index || $0.count != first.count }) {
            throw ShardError("--shard auto: two schedulers' variables disagree: \(first.source) is shard \(first.index)/\(first.count), "
                + "\(other.source) is shard \(other.index)/\(other.count); unset the ones that do not belong to this job")
        }
        return ShardAssignment(index: first.index, count: first.count, source: found.map(\.source).joined(separator: " and "))
    }

    // MARK: - Slurm

    static func slurm(_ env: EnvironmentReader, pinned: Int?) throws(ShardError) -> ShardAssignment? {
        guard let id = try env.number("SLURM_ARRAY_TASK_ID", atLeast: 0) else { return nil }
        let job = env.text("SLURM_ARRAY_JOB_ID").map { "Slurm array job \($0), task \(id)" } ?? "Slurm array task \(id)"
        let tasks = try env.number("SLURM_ARRAY_TASK_COUNT", atLeast: 1)
        let min = try env.number("SLURM_ARRAY_TASK_MIN", atLeast: 0) ?? 0
        let step = try env.number("SLURM_ARRAY_TASK_STEP", atLeast: 1) ?? 1
        let max = try env.number("SLURM_ARRAY_TASK_MAX", atLeast: 0)
        let range = "\(min)-\(max.map(String.init) ?? "?")" + (step == 1 ? "" : ":\(step)")

        if let pinned {
            // The count is pinned: task ids are shard numbers, whatever part of the array runs.
            if let tasks, tasks > pinned {
                throw ShardError("--shard auto: the Slurm array has \(tasks) tasks (SLURM_ARRAY_TASK_COUNT) but "
                    + "\(countVariable)=\(pinned) shards; with the count pinned, submit at most --array=0-\(pinned - 1)")
            }
            if let tasks, tasks == pinned, min != 0 || step != 1 {
                throw ShardError("--shard auto: with \(countVariable)=\(pinned) the Slurm task ids are the shard numbers, "
                    + "0 to \(pinned - 1), but this array runs ids \(range); submit --array=0-\(pinned - 1), or unset "
                    + "\(countVariable) to number shards by position in the array")
            }
            guard id < pinned else {
                throw ShardError("--shard auto: SLURM_ARRAY_TASK_ID=\(id) is not a shard of \(countVariable)=\(pinned): "
                    + "with the count pinned, task ids are shard numbers, 0 to \(pinned - 1)")
            }
            return ShardAssignment(index: id, count: pinned, source: "\(job) (\(countVariable)=\(pinned))")
        }

        guard let tasks else {
            throw ShardError("--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; "
                + "set \(countVariable) to the number of shards, or give --shard I/N")
        }
        let offset = id - min
        guard offset >= 0, offset % step == 0, offset / step < tasks else {
            throw ShardError("--shard auto: SLURM_ARRAY_TASK_ID=\(id) is not one of the \(tasks) tasks of the array "
                + "\(range) (SLURM_ARRAY_TASK_MIN, _STEP, _COUNT)")
        }
        if let max, max != min + (tasks - 1) * step {
            throw ShardError("--shard auto: the Slurm array's task ids are not an evenly spaced range (\(tasks) tasks "
                + "from \(min) to \(max)\(step == 1 ? "" : " in steps of \(step)"), as with --array=1,3,4,9), so a task's "
                + "id does not say its shard; submit a range such as --array=0-\(tasks - 1), or pin the count "
                + "with \(countVariable)")
        }
        return ShardAssignment(index: offset / step, count: tasks, source: "\(job) (SLURM_ARRAY_TASK_ID=\(id) in \(range))")
    }

    // MARK: - Kubernetes

    static func kubernetes(_ env: EnvironmentReader, pinned: Int?) throws(ShardError) -> ShardAssignment? {
        guard let index = try env.number("JOB_COMPLETION_INDEX", atLeast: 0) else { return nil }
        guard let count = pinned else {
            throw ShardError("--shard auto: JOB_COMPLETION_INDEX=\(index) comes from a Kubernetes Indexed Job, which does "
                + "not tell its pods the completion count: set \(countVariable) in the pod template to the Job's "
                + ".spec.completions (see docs/scale.md)")
        }
        guard index < count else {
            throw ShardError("--shard auto: JOB_COMPLETION_INDEX=\(index) is not below \(countVariable)=\(count); "
                + "\(countVariable) must equal the Job's .spec.completions")
        }
        return ShardAssignment(index: index, count: count,
                               source: "Kubernetes Indexed Job (JOB_COMPLETION_INDEX=\(index), \(countVariable)=\(count))")
    }

    // MARK: - AWS Batch

    static func awsBatch(_ env: EnvironmentReader, pinned: Int?) throws(ShardError) -> ShardAssignment? {
        guard let index = try env.number("AWS_BATCH_JOB_ARRAY_INDEX", atLeast: 0) else { return nil }
        let size = try env.number("AWS_BATCH_JOB_ARRAY_SIZE", atLeast: 1)
        if let size, let pinned, size != pinned {
            throw ShardError("--shard auto: AWS_BATCH_JOB_ARRAY_SIZE=\(size) but \(countVariable)=\(pinned); "
                + "unset \(countVariable) or make it the array's size")
        }
        guard let count = size ?? pinned else {
            throw ShardError("--shard auto: AWS_BATCH_JOB_ARRAY_INDEX=\(index) is set but not AWS_BATCH_JOB_ARRAY_SIZE; "
                + "set \(countVariable) in the job definition to the array's size")
        }
        guard index < count else {
            throw ShardError("--shard auto: AWS_BATCH_JOB_ARRAY_INDEX=\(index) is not below the array's size \(count)")
        }
        let job = env.text("AWS_BATCH_JOB_ID").map { "AWS Batch job \($0)" } ?? "AWS Batch array child"
        return ShardAssignment(index: index, count: count,
                               source: "\(job) (AWS_BATCH_JOB_ARRAY_INDEX=\(index) of \(count))")
    }

    // MARK: - No array task

    /// Why `auto` found nothing, with a hint when the process runs under a scheduler but not
    /// as an array task.
    static func notAnArrayTask(_ environment: [String: String]) -> String {
        let variables = "SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX"
        if let job = environment["SLURM_JOB_ID"] {
            return "--shard auto: Slurm job \(job) is not an array job (no SLURM_ARRAY_TASK_ID); submit it with "
                + "sbatch --array=0-N-1, or give --shard I/N"
        }
        if let job = environment["AWS_BATCH_JOB_ID"] {
            return "--shard auto: AWS Batch job \(job) is not a child of an array job (no AWS_BATCH_JOB_ARRAY_INDEX); "
                + "submit it with arrayProperties size N, or give --shard I/N"
        }
        if environment["KUBERNETES_SERVICE_HOST"] != nil {
            return "--shard auto: this Kubernetes pod has no JOB_COMPLETION_INDEX; run it from a Job with "
                + "completionMode: Indexed, or give --shard I/N"
        }
        return "--shard auto: no scheduler's array task variables here (\(variables)); "
            + "run it as a task of an array job, or give --shard I/N"
    }
}

/// Why a shard could not be determined; the message names the variables involved.
public struct ShardError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Reads whole numbers from an environment, with errors that name the variable.
struct EnvironmentReader {
    var environment: [String: String]

    /// The variable's text, `nil` when unset or empty.
    func text(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// The variable as a whole number `>= minimum`; `nil` when it is unset or empty, an error
    /// when it is anything else.
    func number(_ name: String, atLeast minimum: Int) throws(ShardError) -> Int? {
        guard let value = text(name) else { return nil }
        guard let number = Int(value) else {
            throw ShardError("--shard auto: \(name)='\(value)' is not a whole number")
        }
        guard number >= minimum else {
            throw ShardError("--shard auto: \(name)=\(number) is below \(minimum)"
                + (minimum == 1 ? " (a batch has at least one shard)" : ""))
        }
        return number
    }
}
