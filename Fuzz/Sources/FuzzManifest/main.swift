// Fuzz target: manifest text -> ManifestLoader (libyaml, decoding, ${VAR} expansion, diagnostics).
#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import SyncrManifest

/// A value that must never appear in a diagnostic (values from the environment are secrets).
private enum Fixed {
    static let secret = "Zq7SECRETvalue9"
    static let environment = ["TOKEN": secret, "EMPTY": "", "HOME": "/home/fuzz", "USER": "fuzz"]
}

runFuzzer(fuzz)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let work = Scratch.freshWork()
    let path = work + "/syncr.yml"
    Scratch.write(bytes, to: path)

    // The bytes as they are, read from a file (what `syncr validate` does).
    let fromFile = outcome { () throws(ManifestError) in try ManifestLoader.load(path: path, environment: Fixed.environment) }
    let inputHasSecret = String(decoding: bytes, as: UTF8.self).contains("SECRETvalue")
    if !inputHasSecret {
        invariant(!fromFile.contains(Fixed.secret), "a secret from the environment appears in: \(fromFile)")
    }
    // Valid UTF-8 through the text entry point gives the same answer (the file path only differs
    // in the folder relative paths resolve against, which is absolute here and there).
    if let text = String(validating: Array(bytes), as: UTF8.self) {
        let fromText = outcome { () throws(ManifestError) in
            try ManifestLoader.parse(text: text, path: path, directory: work, environment: Fixed.environment)
        }
        invariant(fromText == fromFile, "text and file parses differ:\n\(fromText)\n---\n\(fromFile)")
    }
    return 0
}

/// A rendering of everything a parse produced, to compare and to search for secrets.
private func outcome(_ body: () throws(ManifestError) -> Manifest) -> String {
    do {
        let m = try body()
        var text = "OK version=\(m.version) cache=\(m.cacheDirectory) defaults=\(m.defaults)\n"
        for d in m.downloads {
            invariant(d.location.line >= 1 && d.location.column >= 1, "bad location \(d.location)")
            text += "download \(d.index) \(d.location) \(d.url.written) -> \(d.destination) \(d.checksums) \(d.settings.jobs) \(d.settings.headers.map { "\($0.name): \($0.value.written)" }) unzip=\(d.unzip) strip=\(d.stripComponents)\n"
        }
        for u in m.uploads {
            invariant(u.location.line >= 1 && u.location.column >= 1, "bad location \(u.location)")
            text += "upload \(u.index) \(u.location) \(u.source) -> \(u.url.written) \(u.method) \(u.field) \(u.fields.map { "\($0.name)=\($0.value.written)" }) \(u.contentType ?? "-")\n"
        }
        return text
    } catch {
        for d in error.diagnostics {
            if let location = d.location {
                invariant(location.line >= 1 && location.column >= 1, "bad location \(location)")
            }
        }
        return error.description
    }
}
