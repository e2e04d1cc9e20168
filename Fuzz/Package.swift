// swift-tools-version: 6.0
// Fuzz targets for syncr's parsers (libFuzzer). Kept out of the main package so that a normal
// `swift build` never needs the fuzzer runtime. Build and run them with `scripts/fuzz`.
import PackageDescription

let package = Package(
    name: "syncr-fuzz",
    dependencies: [.package(name: "syncr", path: "..")],
    targets: [
        // Scratch folders and file helpers shared by the targets.
        .target(name: "CFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzer"]),
        .executableTarget(name: "FuzzManifest", dependencies: [
            "FuzzSupport", .product(name: "SyncrManifest", package: "syncr"),
        ]),
        .executableTarget(name: "FuzzZip", dependencies: [
            "FuzzSupport", .product(name: "SyncrArchive", package: "syncr"),
        ]),
        .executableTarget(name: "FuzzTar", dependencies: [
            "FuzzSupport", .product(name: "SyncrArchive", package: "syncr"),
        ]),
        .executableTarget(name: "FuzzHTTP", dependencies: [
            "FuzzSupport", .product(name: "SyncrHTTP", package: "syncr"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
