@testable import SyncrCore
import Testing

/// `--shard auto` reads each CI engine's own variables, says which, and fails clearly when none
/// is set, a set is incomplete, or two disagree.
@Suite(.timeLimit(.minutes(10))) struct ShardEnvironmentTests {
    @Test(arguments: [
        (["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4"], "2/4", "CI_NODE_INDEX=2, CI_NODE_TOTAL=4 (GitLab)"),
        (["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "1"], "1/1", "CI_NODE_INDEX=1"),
        (["JOB_COMPLETION_INDEX": "0", "SYNCR_SHARD_TOTAL": "3"], "1/3", "JOB_COMPLETION_INDEX=0, SYNCR_SHARD_TOTAL=3 (Kubernetes"),
        (["JOB_COMPLETION_INDEX": "2", "SYNCR_SHARD_TOTAL": "3"], "3/3", "JOB_COMPLETION_INDEX=2"),
        (["BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "5"], "1/5", "(Buildkite)"),
        (["CIRCLE_NODE_INDEX": "3", "CIRCLE_NODE_TOTAL": "4"], "4/4", "(CircleCI)"),
        (["SYNCR_SHARD": "3/8"], "3/8", "SYNCR_SHARD=3/8"),
        // Two engines that agree: both are named.
        (["SYNCR_SHARD": "2/4", "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4", "CI": "true"], "2/4", "CI_NODE_INDEX=2, CI_NODE_TOTAL=4 (GitLab); SYNCR_SHARD=2/4"),
        // What an engine says of a job that is not split (GitLab: CI_NODE_TOTAL=1 alone;
        // CircleCI: 0 of 1) is the whole manifest, and gives way to any other variable
        // (it refused every GitLab job without parallel:, and SYNCR_SHARD there).
        (["CI_NODE_TOTAL": "1"], "1/1", "CI_NODE_TOTAL=1 (GitLab, a job that is not split)"),
        (["CI_NODE_TOTAL": "1", "SYNCR_SHARD": "2/3"], "2/3", "SYNCR_SHARD=2/3"),
        (["CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "1", "SYNCR_SHARD": "2/3"], "2/3", "SYNCR_SHARD=2/3"),
        (["CI_NODE_TOTAL": "1", "BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "2"], "2/2", "(Buildkite)"),
    ])
    func readsEachEngine(environment: [String: String], shard: String, said: String) throws {
        let (found, how) = try ShardEnvironment.resolve(environment)
        #expect(found == Shard(shard))
        #expect(how.contains(said), "\(how)")
    }

    @Test func noneSetNamesEveryVariable() {
        #expect {
            try ShardEnvironment.resolve(["PATH": "/bin", "CI": "true"])
        } throws: { error in
            let message = "\(error)"
            return ShardEnvironment.variables.allSatisfy { message.contains($0) } && message.contains("--shard I/N")
        }
    }

    @Test func disagreeingEnginesAreRefused() {
        #expect {
            try ShardEnvironment.resolve(["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4", "SYNCR_SHARD": "2/4"])
        } throws: { error in
            let message = "\(error)"
            return message.contains("disagree") && message.contains("CI_NODE_INDEX=1") && message.contains("SYNCR_SHARD=2/4")
        }
    }

    /// Kubernetes passes the index only: the error says to set SYNCR_SHARD_TOTAL.
    @Test func kubernetesWithoutTotalSaysWhatToSet() {
        #expect {
            try ShardEnvironment.resolve(["JOB_COMPLETION_INDEX": "0"])
        } throws: { error in
            "\(error)".contains("SYNCR_SHARD_TOTAL") && "\(error)".contains("completions")
        }
    }

    @Test(arguments: [
        ["CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "4"],  // GitLab counts from 1
        ["CIRCLE_NODE_INDEX": "4", "CIRCLE_NODE_TOTAL": "4"],  // CircleCI counts from 0
        ["BUILDKITE_PARALLEL_JOB": "x", "BUILDKITE_PARALLEL_JOB_COUNT": "2"],
        ["SYNCR_SHARD": "5/4"],
        ["CI_NODE_TOTAL": "4"],
        // Counted from 0, the largest index has no successor: refused, not an overflow trap.
        ["BUILDKITE_PARALLEL_JOB": "9223372036854775807", "BUILDKITE_PARALLEL_JOB_COUNT": "4"],
    ])
    func refusesWhatIsNoShard(environment: [String: String]) {
        #expect(throws: ShardEnvironmentError.self) { try ShardEnvironment.resolve(environment) }
    }
}
