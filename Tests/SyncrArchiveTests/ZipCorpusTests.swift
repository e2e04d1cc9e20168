import Foundation
import Testing
@testable import SyncrArchive

/// What Python's `zipfile` reads from an archive: the oracle for the corpus rule
/// (Tests/Corpus/zip/README.md).
struct ZipOracle: Decodable {
    /// Python opened the archive and read and verified every entry.
    var readable: Bool
    /// Why not (the open error, or each entry's read error).
    var problems: [String]
    /// Entries Python reads but whose path leaves the destination or whose link points out of it;
    /// Python does not check these, syncr must refuse them.
    var unsafe: [String]
    /// Names that occur twice.
    var duplicates: [String]
    /// The files syncr must produce: path -> "dir", "link:TARGET" or "file:SHA256".
    var tree: [String: String]
    /// What syncr produced in the staging folder, in the same form.
    var unpacked: [String: String]

    /// Names are decoded as syncr's rule says (UTF-8 when flagged or valid, else CP437), from the
    /// raw bytes Python recovers by re-encoding its CP437 reading.
    static let script = Tree.walker + #"""
import sys, json, zipfile, hashlib, stat
path, staging = sys.argv[1], sys.argv[2]
def name_of(info):
    name = info.orig_filename
    if info.flag_bits & 0x800:
        return name
    try:
        return name.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return name
def parts(name):
    if "\\" in name or "\0" in name or name.startswith("/"):
        return None
    ps = [p for p in name.split("/") if p not in ("", ".")]
    if not ps or ".." in ps:
        return None
    if len(ps[0]) >= 2 and ps[0][1] == ":" and ps[0][0].isalpha():
        return None
    return ps
def link_inside(ps, target):
    if not target or target.startswith("/") or "\\" in target:
        return False
    stack = ps[:-1]
    for p in target.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not stack:
                return False
            stack.pop()
        else:
            stack.append(p)
    return True
out = {"readable": True, "problems": [], "unsafe": [], "duplicates": [], "tree": {}, "unpacked": snapshot(staging)}
try:
    z = zipfile.ZipFile(path)
    infos = z.infolist()
except Exception as e:
    out["readable"] = False
    out["problems"].append("open: " + repr(e))
    infos = []
seen = set()
for info in infos:
    name = name_of(info)
    try:
        data = z.read(info)
    except Exception as e:
        out["readable"] = False
        out["problems"].append(name + ": " + repr(e))
        continue
    ps = parts(name)
    if ps is None:
        out["unsafe"].append(name)
        continue
    key = "/".join(ps)
    if key in seen:
        out["duplicates"].append(name)
    seen.add(key)
    for i in range(1, len(ps)):
        out["tree"]["/".join(ps[:i])] = "dir"
    mode = info.external_attr >> 16
    if name.endswith("/"):
        out["tree"][key] = "dir"
    elif info.create_system in (3, 19) and stat.S_ISLNK(mode):
        target = data.decode("utf-8")
        if not link_inside(ps, target):
            out["unsafe"].append(name)
        out["tree"][key] = "link:" + target
    else:
        out["tree"][key] = "file:" + hashlib.sha256(data).hexdigest()
print(json.dumps(out))
"""#

    /// Reads `archive` with Python, and snapshots what syncr unpacked into `staging`.
    static func read(_ archive: String, staging: String) throws -> ZipOracle {
        try Python.json(ZipOracle.self, script, archive, staging)
    }

    /// Whether the corpus rule says syncr must unpack it (else: refuse it).
    var mustUnpack: Bool { readable && unsafe.isEmpty && duplicates.isEmpty }
}

/// Archives where syncr and Python's `zipfile` disagree on purpose, and why.
let corpusDisagreements: [String: String] = [
    // The central directory says stored (0); the local header says method 9 (Deflate64). Python
    // reads only the central directory's method and copies the bytes; Info-ZIP goes by the local
    // header ("unknown compression method"). The README lists this archive as the unknown-method
    // case, and a header pair that disagrees is not an archive syncr can trust.
    "testInvalidCompressionMethodErrorConditions.zip":
        "local header method 9 disagrees with the central directory",
]

func corpusArchives() -> [String] {
    let folder = Repository.zipCorpus
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
        return ["MISSING: \(folder)"]
    }
    return names.filter { $0.hasSuffix(".zip") }.sorted()
}

@Suite(.timeLimit(.minutes(10))) struct ZipCorpusTests {
    @Test("Corpus archive unpacks as Python reads it, or is refused", arguments: corpusArchives())
    func corpusArchive(_ name: String) throws {
        try #require(!name.hasPrefix("MISSING"),
                     "the zip corpus is missing: expected \(Repository.zipCorpus), \(name)")
        let path = Repository.zipCorpus + "/" + name
        let scratch = try ZipScratch()
        let result = unpack(path, into: scratch.staging)
        let oracle = try ZipOracle.read(path, staging: scratch.staging)
        #expect(scratch.escaped() == [], "something was written outside the staging folder")

        if oracle.mustUnpack && corpusDisagreements[name] == nil {
            guard case .success = result else {
                Issue.record("Python reads every entry of \(name), syncr refused it: \(result)")
                return
            }
            #expect(oracle.unpacked == oracle.tree)
        } else {
            guard case .failure(let error) = result else {
                Issue.record("syncr unpacked \(name), which must be refused: \(oracle.problems) \(oracle.unsafe) \(oracle.duplicates)")
                return
            }
            #expect(error.description.hasPrefix(name), "the error names the archive: \(error)")
            if !oracle.unsafe.isEmpty || !oracle.duplicates.isEmpty {
                #expect(error.entry != nil, "the error names the entry: \(error)")
            }
        }
    }

    /// What the large ZIPFoundation archives left out of the corpus test: 1 MiB of random bytes
    /// deflated beside stored entries and a folder, each entry with a ZIP64 extra field it does
    /// not need (Python writes one in the local header with `force_zip64`).
    @Test func largeEntriesWithZip64ExtraFields() throws {
        let scratch = try ZipScratch()
        let archive = scratch.input("zip64-extras.zip")
        try Python.run(#"""
            import sys, zipfile, random
            data = random.Random(11).randbytes(1 << 20)
            text = ("Habe nun, ach! Philosophie,\n" * 8000).encode()
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                z.writestr(zipfile.ZipInfo("test/"), b"")
                for name, body, method in [("test/data.random", data, zipfile.ZIP_DEFLATED),
                                           ("test/faust.txt", text, zipfile.ZIP_STORED),
                                           ("test/faust.deflated", text, zipfile.ZIP_DEFLATED)]:
                    info = zipfile.ZipInfo(name)
                    info.compress_type = method
                    with z.open(info, "w", force_zip64=True) as f:
                        f.write(body)
            """#, archive)
        let result = unpack(archive, into: scratch.staging)
        let oracle = try ZipOracle.read(archive, staging: scratch.staging)
        guard case .success = result else {
            Issue.record("Python reads every entry, syncr refused it: \(result)")
            return
        }
        #expect(oracle.mustUnpack)
        #expect(oracle.tree.count == 4)
        #expect(oracle.unpacked == oracle.tree)
    }
}
