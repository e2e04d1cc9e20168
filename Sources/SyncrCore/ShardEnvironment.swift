/// `--shard auto`: the shard a CI engine says this machine runs, from the engine's own variables.
public enum ShardEnvironment {
    /// One engine's pair of variables.
    struct Source {
        var engine: String
        var index: String
        var total: String
        /// Whether `index` counts from 0 (Kubernetes, Buildkite, CircleCI) or 1 (GitLab).
        var zeroBased: Bool
        /// Said when `index` is set and `total` is not.
        var missingTotalHint: String
    }

    static let sources: [Source] = [
        Source(engine: "GitLab", index: "CI_NODE_INDEX", total: "CI_NODE_TOTAL", zeroBased: false,
               missingTotalHint: "GitLab sets both for jobs with 'parallel:'"),
        Source(engine: "Kubernetes Indexed Job", index: "JOB_COMPLETION_INDEX", total: "SYNCR_SHARD_TOTAL", zeroBased: true,
               missingTotalHint: "Kubernetes does not pass the number of completions: set SYNCR_SHARD_TOTAL to the Job's 'completions'"),
        Source(engine: "Buildkite", index: "BUILDKITE_PARALLEL_JOB", total: "BUILDKITE_PARALLEL_JOB_COUNT", zeroBased: true,
               missingTotalHint: "Buildkite sets both for steps with 'parallelism:'"),
        Source(engine: "CircleCI", index: "CIRCLE_NODE_INDEX", total: "CIRCLE_NODE_TOTAL", zeroBased: true,
               missingTotalHint: "CircleCI sets both for jobs with 'parallelism:'"),
    ]

    /// Every variable `--shard auto` reads, for help texts and errors.
    public static let variables: [String] = sources.flatMap { [$0.index, $0.total] } + ["SYNCR_SHARD"]

    /// The shard the environment names, and which variables said so (`CI_NODE_INDEX=2,
    /// CI_NODE_TOTAL=4 (GitLab)`).
    /// - Throws: `ShardEnvironmentError` when no engine's variables are set, when a set is
    ///   incomplete or not numbers, or when two engines disagree.
    public static func resolve(_ environment: [String: String]) throws(ShardEnvironmentError) -> (Shard, String) {
        // An engine's 1/1 is what it says of every job that is not split (GitLab sets
        // CI_NODE_TOTAL=1 alone, CircleCI 0 and 1): it stands only where nothing else speaks.
        var found: [(Shard, String)] = []
        var whole: [(Shard, String)] = []
        for source in sources {
            let index = environment[source.index].flatMap { $0.isEmpty ? nil : $0 }
            let total = environment[source.total].flatMap { $0.isEmpty ? nil : $0 }
            if index == nil && total == nil { continue }
            if index == nil, total == "1", let one = Shard(index: 1, count: 1) {
                whole.append((one, "\(source.total)=1 (\(source.engine), a job that is not split)"))
                continue
            }
            guard let index, let total else {
                let (set, unset) = index != nil ? (source.index, source.total) : (source.total, source.index)
                throw ShardEnvironmentError(message: "--shard auto: \(set) is set but \(unset) is not (\(source.engine)); "
                    + (index != nil ? source.missingTotalHint : "set both, or neither"))
            }
            let said = "\(source.index)=\(index), \(source.total)=\(total) (\(source.engine))"
            // A zero-based index is counted from 1 here; one at Int.max has no successor.
            guard let i = Int(index), let n = Int(total), !(source.zeroBased && i == Int.max),
                  let shard = Shard(index: source.zeroBased ? i + 1 : i, count: n) else {
                let range = source.zeroBased ? "0 to \(source.total) - 1" : "1 to \(source.total)"
                throw ShardEnvironmentError(message: "--shard auto: \(said) is not a shard: \(source.index) must be "
                    + "a whole number from \(range)")
            }
            if shard.count == 1 { whole.append((shard, said)) } else { found.append((shard, said)) }
        }
        if let text = environment["SYNCR_SHARD"], !text.isEmpty {
            guard let shard = Shard(text) else {
                throw ShardEnvironmentError(message: "--shard auto: SYNCR_SHARD=\(text) is not a shard; write I/N with "
                    + "1 <= I <= N, such as 2/4")
            }
            found.append((shard, "SYNCR_SHARD=\(text)"))
        }
        if found.isEmpty { found = whole }
        guard let first = found.first else {
            throw ShardEnvironmentError(message: "--shard auto: none of the shard variables is set ("
                + variables.joined(separator: ", ") + "); give the shard as --shard I/N, or set SYNCR_SHARD=I/N")
        }
        if let other = found.first(where: { $0.0 != first.0 }) {
            throw ShardEnvironmentError(message: "--shard auto: the variables disagree: \(first.1) is shard \(first.0), "
                + "but \(other.1) is shard \(other.0); unset one, or give --shard I/N")
        }
        return (first.0, found.map(\.1).joined(separator: "; "))
    }
}

/// `--shard auto` could not tell the shard.
public struct ShardEnvironmentError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to set.
    public var message: String
    /// The message.
    public var description: String { message }
}
