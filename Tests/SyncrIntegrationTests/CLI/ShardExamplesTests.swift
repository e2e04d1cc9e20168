import Foundation
import Testing

/// The sharded CI examples (Kubernetes Indexed Job, GitLab `parallel:`, GitHub Actions matrix):
/// their files are YAML, every syncr command in them parses with the options it gives, and the
/// shard variables they set match the number of machines they run.
@Suite(.timeLimit(.minutes(5)))
struct ShardExamplesTests {
    /// Each file as JSON (via python3's yaml, a real YAML parser).
    static func load(_ relative: String) async throws -> [String: Any] {
        let script = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"
        let r = try await runProcess(executable: "python3", arguments: ["-c", script, DocsRepository.root + "/" + relative])
        try #require(r.exitCode == 0, "\(relative) is not YAML: \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: r.stdoutData) as? [String: Any])
    }

    /// `syncr ARGS` parses: the command and each option exist and apply to it (`--help` then
    /// prints the command's help instead of running it).
    static func expectParses(_ arguments: [String], _ origin: String) async throws {
        let r = try await CLIHarness().run(arguments + ["--help"])
        #expect(r.status == 0, "\(origin): syncr \(arguments.joined(separator: " ")): \(r.stderr)")
    }

    /// The words of every `syncr ...` line of a script (GitLab `script:`, GitHub `run:`), with
    /// `$VAR` and `${{ ... }}` put in as a shell and Actions would.
    static func syncrCommands(in scripts: [String], values: [String: String]) -> [[String]] {
        scripts.flatMap { $0.split(separator: "\n") }.compactMap { line -> [String]? in
            var text = String(line).trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("syncr ") else { return nil }
            for (name, value) in values { text = text.replacingOccurrences(of: name, with: value) }
            return Array(text.split(separator: " ").dropFirst().map(String.init))
        }
    }

    @Test func kubernetesIndexedJob() async throws {
        let job = try await Self.load("examples/kubernetes-indexed-job/job.yaml")
        let spec = try #require(job["spec"] as? [String: Any])
        #expect(spec["completionMode"] as? String == "Indexed")
        let completions = try #require(spec["completions"] as? Int)
        let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let env = (container["env"] as? [[String: Any]] ?? []).compactMap { e in (e["value"] as? String).map { (e["name"] as! String, $0) } }
        #expect(Dictionary(uniqueKeysWithValues: env)["SYNCR_SHARD_TOTAL"] == String(completions),
                "SYNCR_SHARD_TOTAL is the Job's completions")
        let args = try #require(container["args"] as? [String]).map { $0.replacingOccurrences(of: "$(JOB_COMPLETION_INDEX)", with: "0") }
        #expect(args.first == "apply" && args.contains("auto") && args.contains("--locked"))
        try await Self.expectParses(args, "job.yaml")
    }

    @Test func gitlabParallel() async throws {
        let ci = try await Self.load("examples/gitlab-parallel/.gitlab-ci.yml")
        let fetch = try #require(ci["fetch"] as? [String: Any])
        #expect(fetch["parallel"] as? Int == 4)
        let report = try #require(ci["report"] as? [String: Any])
        let scripts = (fetch["script"] as? [String] ?? []) + (report["script"] as? [String] ?? [])
        let commands = Self.syncrCommands(in: scripts, values: ["$CI_NODE_INDEX": "1"])
        #expect(commands.map { $0.first ?? "" } == ["apply", "report", "report"])
        #expect(commands[0].contains("auto"))
        for command in commands { try await Self.expectParses(command, ".gitlab-ci.yml") }
    }

    @Test func githubActionsMatrix() async throws {
        let workflow = try await Self.load("examples/github-actions-matrix/workflow.yml")
        let jobs = try #require(workflow["jobs"] as? [String: Any])
        let fetch = try #require(jobs["fetch"] as? [String: Any])
        let shards = try #require(((fetch["strategy"] as? [String: Any])?["matrix"] as? [String: Any])?["shard"] as? [Int])
        let steps = (fetch["steps"] as? [[String: Any]] ?? []) + ((jobs["report"] as? [String: Any])?["steps"] as? [[String: Any]] ?? [])
        let step = try #require(steps.first { ($0["env"] as? [String: Any])?["SYNCR_SHARD"] != nil })
        let shard = try #require((step["env"] as? [String: Any])?["SYNCR_SHARD"] as? String)
        #expect(shard == "${{ matrix.shard }}/\(shards.count)", "SYNCR_SHARD counts the matrix")
        #expect(shards == Array(1...shards.count), "1-based shards")
        let commands = Self.syncrCommands(in: steps.compactMap { $0["run"] as? String }, values: ["${{ matrix.shard }}": "1"])
        #expect(commands.map { $0.first ?? "" } == ["apply", "report"])
        for command in commands { try await Self.expectParses(command, "workflow.yml") }
    }
}
