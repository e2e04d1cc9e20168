// swift-tools-version: 6.0
// The package layout is the architecture: each target owns one concern, and the
// dependency arrows below are the only ones the compiler allows.
//
//   syncr (CLI) -> SyncrCore -> SyncrManifest (libyaml)
//                            -> SyncrHTTP     (libcurl)  -> SyncrLock
//                            -> SyncrArchive  (zlib)     -> SyncrLock
//                            -> SyncrDigest   (libcrypto)
//                            -> SyncrS3       (SigV4, S3 addressing) -> SyncrDigest
import PackageDescription

let package = Package(
    name: "syncr",
    products: [
        .executable(name: "syncr", targets: ["syncr"]),
        .library(name: "SyncrCore", targets: ["SyncrCore"]),
        // The parsers on their own, for the fuzz targets in Fuzz/ (a separate package).
        .library(name: "SyncrManifest", targets: ["SyncrManifest"]),
        .library(name: "SyncrHTTP", targets: ["SyncrHTTP"]),
        .library(name: "SyncrArchive", targets: ["SyncrArchive"]),
    ],
    targets: [
        // C libraries, each behind a module map and a shim header of typed wrappers.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1",
                       providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),

        // The few Linux calls Swift's Glibc module does not export (fallocate), and the commit
        // `make` passes as -Xcc -DSYNCR_COMMIT (syncr version).
        .target(name: "CSystem", path: "Sources/CSystem"),

        // The one lock type (`Locked`), for every module that needs a lock; imports nothing.
        .target(name: "SyncrLock"),

        // Leaves: they never import each other.
        .target(name: "SyncrManifest", dependencies: ["CYAML"]),
        .target(name: "SyncrHTTP", dependencies: ["CCurl", "SyncrLock", "CSystem"]),
        .target(name: "SyncrArchive", dependencies: ["CZlib", "SyncrLock"]),
        .target(name: "SyncrDigest", dependencies: ["CCrypto"]),
        // Object storage: SigV4 signing, s3:// addressing, credentials, S3's XML. Pure logic on
        // top of SyncrDigest's HMAC; SyncrCore puts it into requests.
        .target(name: "SyncrS3", dependencies: ["SyncrDigest"]),

        // Cache, planner and executor: joins the leaves.
        .target(name: "SyncrCore",
                dependencies: ["SyncrManifest", "SyncrHTTP", "SyncrArchive", "SyncrDigest", "SyncrS3", "SyncrLock", "CSystem"]),

        // Argument parsing and rendering only.
        .executableTarget(name: "syncr", dependencies: ["SyncrCore", "SyncrLock"]),

        // How every test target starts child processes: one at a time, since they share a process.
        .target(name: "SyncrTestSupport", path: "Tests/SyncrTestSupport"),
        .testTarget(name: "SyncrManifestTests", dependencies: ["SyncrManifest"]),
        .testTarget(name: "SyncrLockTests", dependencies: ["SyncrLock"]),
        .testTarget(name: "SyncrHTTPTests", dependencies: ["SyncrHTTP"]),
        .testTarget(name: "SyncrCoreTests", dependencies: ["SyncrCore", "SyncrLock", "SyncrS3", "SyncrTestSupport"]),
        .testTarget(name: "SyncrS3Tests", dependencies: ["SyncrS3", "SyncrDigest"], exclude: ["Fixtures"]),
        .testTarget(name: "SyncrArchiveTests", dependencies: ["SyncrArchive", "SyncrTestSupport"]),
        .testTarget(name: "SyncrTarTests", dependencies: ["SyncrArchive", "SyncrTestSupport"]),
        .testTarget(name: "SyncrArchiveWriterTests", dependencies: ["SyncrArchive", "SyncrTestSupport"]),
        // Runs the built `syncr` binary against real servers on 127.0.0.1.
        .testTarget(name: "SyncrIntegrationTests", dependencies: ["SyncrCore", "SyncrHTTP", "SyncrLock", "syncr", "SyncrTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
