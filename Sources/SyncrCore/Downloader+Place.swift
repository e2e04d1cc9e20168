#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import SyncrArchive
import SyncrHTTP
import SyncrManifest

/// The place stage: the verified file (or the folder unpacked from it) takes the destination's
/// name in one step, and the record says so.
extension Downloader {
    /// Puts the verified cache file in place: unpacked into a folder for `unzip:` entries,
    /// renamed onto the destination otherwise. `fingerprint` is the cache file's, as settled.
    /// - Returns: what an unpack had to say (`EntryNote.unpacked`), nil for a file.
    @discardableResult
    func place(dataPath: String, size: Int64, fingerprint: FileFingerprint?, recorder: EntryRecorder) async throws -> EntryNote? {
        let digests = Dictionary(uniqueKeysWithValues: download.checksums.map { ($0.algorithm, $0.hex) })
        let finish: @Sendable (inout EntryState) -> Void = {
            $0.size = size
            $0.complete = true
            $0.verified = digests
        }
        if download.unzip {
            let notes = try await unpack(dataPath: dataPath, recorder: recorder, finish: finish)
            return notes.isEmpty ? nil : .unpacked(notes: notes)
        }
        try await promote(dataPath: dataPath, fingerprint: fingerprint, recorder: recorder, finish: finish)
        return nil
    }

    /// Unpacks the finished archive into a staging folder beside the destination, and swaps it in
    /// only when every entry was unpacked and verified; a failure leaves the old folder as it
    /// was. The archive stays in the cache, so a folder changed later is unpacked again without
    /// a download.
    func unpack(dataPath: String, recorder: EntryRecorder,
                        finish: @Sendable (inout EntryState) -> Void) async throws -> [String] {
        let destination = download.destination
        // Unpacking stopped by a full or read-only disk: the verified archive is recorded as
        // complete, so the next run unpacks it again from the cache instead of downloading it.
        func keepArchive() async {
            try? await recorder.update(durable: false) {
                finish(&$0)
                $0.destinationTree = nil
            }
        }
        await yieldTurn()
        try FS.makeDirectories(parent)
        if [.file, .other].contains(FS.kind(destination)) {
            throw SyncError.destinationBlocked(destination: download.to, wantsFolder: true)
        }
        let staging = stagingPath
        FolderReplace.removeTree(staging)
        guard mkdir(staging, 0o755) == 0 else {
            let code = errno
            if Self.isSpaceError(code) {
                await keepArchive()
                throw code == EROFS
                    ? SyncError.readOnly(path: parent, during: .unpack)
                    : SyncError.noSpace(path: parent, needed: nil, available: FreeSpace.available(at: parent), errno: code,
                                        during: .unpack)
            }
            throw FileError(path: staging, operation: "create the staging folder", errno: code)
        }
        let name = Self.archiveName(download.url.written)
        let strip = download.stripComponents
        let limits = ExtractionLimits.forDownload(download)
        let summary: UnpackSummary
        do {
            summary = try await BlockingIO.run {
                try Unpack.extract(archive: dataPath, name: name, into: staging, stripComponents: strip, limits: limits)
            }
        } catch let error as ArchiveError {
            FolderReplace.removeTree(staging)
            switch error {
            case .io(_, let code, _) where Self.isSpaceError(code):
                await keepArchive()
                // A full (or read-only) disk is said as such, with its code, as when the
                // staging folder could not be made: scripts match no_space.
                throw code == EROFS
                    ? SyncError.readOnly(path: parent, during: .unpack)
                    : SyncError.noSpace(path: parent, needed: nil, available: FreeSpace.available(at: parent), errno: code,
                                        during: .unpack)
            case .limit, .stripped, .duplicate(_, _, _, _, .some):
                // Raising max_unpacked_size, making room or changing strip_components (which
                // also made two names one) must not cost another download.
                await keepArchive()
            default:
                break
            }
            throw SyncError.unpack(url: url, destination: download.to, error: error)
        } catch {
            FolderReplace.removeTree(staging)
            throw SyncError.other(message: "\(url): cannot unpack into \(download.to): \(error)")
        }
        do {
            try await keepsForeignFiles(staging: staging)
            if cache.flushes { try await FolderReplace.flushTree(staging, flusher: flusher) }
            try FolderReplace.replace(destination, with: staging, display: download.to, flush: cache.flushes)
        } catch {
            FolderReplace.removeTree(staging)
            throw error
        }
        let tree = FolderReplace.fingerprint(destination)
        try await recorder.update(durable: false) {
            finish(&$0)
            $0.destination = destination
            $0.destinationFingerprint = nil
            $0.destinationTree = tree
        }
        folders.add(parent)
        return summary.notes
    }

    /// Refuses to replace a folder that syncr has no record of unpacking at the destination
    /// when it holds anything the unpacked archive (`staging`) does not: the swap deletes the
    /// old folder whole, and with it whatever someone put there. A folder the archive covers
    /// (a cache that was removed, a first unpack over an earlier copy of the same files) is
    /// replaced as a file would be.
    func keepsForeignFiles(staging: String) async throws {
        guard !unpackedBefore, FS.kind(download.destination) == .directory else { return }
        let destination = download.destination
        let foreign = try await BlockingIO.run { FolderReplace.firstPathMissing(from: staging, in: destination) }
        if let foreign {
            throw SyncError.folderNotUnpacked(destination: download.to, holds: foreign)
        }
    }

    /// The last path component of a URL (without query or fragment): what the archive's format
    /// is guessed from.
    static func archiveName(_ url: String) -> String {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let trimmed = path.split(separator: "#", maxSplits: 1).first.map(String.init) ?? path
        return trimmed.split(separator: "/").last.map(String.init) ?? trimmed
    }

    /// Moves the finished data onto the destination in one step.
    /// The record is written (with `finish` applied) before the rename without a flush of its
    /// own: losing it to a power cut costs a second download, never a wrong file.
    func promote(dataPath: String, fingerprint: FileFingerprint?, recorder: EntryRecorder,
                 finish: @Sendable (inout EntryState) -> Void) async throws {
        let destination = download.destination
        let folder = FS.parentFolder(destination)
        try folders.ensure(folder)
        // rename keeps the inode, size and mtime, so the fingerprint can be recorded first: a
        // crash right after the rename still finds a record that matches the destination (a
        // small file's may wait for the next ones: a kill then costs its download again).
        try await recorder.update(durable: false, mayWait: true) {
            finish(&$0)
            $0.destination = destination
            $0.destinationFingerprint = fingerprint
        }
        // Most destinations do not exist yet: a rename that refuses to replace anything needs no
        // look at the destination first. Anything there is looked at below.
        if syncr_rename_noreplace(dataPath, destination) == 0 {
            folders.add(folder)
            return
        }
        switch FS.kind(destination) {
        case .directory, .other:
            try? await recorder.update { $0.destination = nil; $0.destinationFingerprint = nil }
            throw SyncError.destinationBlocked(destination: download.to, wantsFolder: false)
        case .file:
            // Replacing a file keeps its permissions.
            var st = stat()
            if stat(destination, &st) == 0 { chmod(dataPath, st.st_mode & 0o777) }
        case .missing:
            break
        }
        if rename(dataPath, destination) == 0 {
            folders.add(folder)
            return
        }
        if errno == ENOENT {
            // The folder was removed since this run made or found it.
            folders.forget(folder)
            try folders.ensure(folder)
            if rename(dataPath, destination) == 0 {
                folders.add(folder)
                return
            }
        }
        let code = errno
        guard code == EXDEV else {
            try? await recorder.update { $0.destination = nil; $0.destinationFingerprint = nil }
            throw FileError(path: download.to, operation: "move the finished file into place", errno: code)
        }
        // The cache is on another file system: copy beside the destination, then rename.
        let temp = copyPath
        await yieldTurn()
        do {
            try await BlockingIO.run { [flushes = cache.flushes] in try FS.copy(dataPath, to: temp, flush: flushes) }
        } catch {
            FS.remove(temp)
            try? await recorder.update { $0.destination = nil; $0.destinationFingerprint = nil }
            throw copyFailure(error, folder: folder)
        }
        if rename(temp, destination) != 0 {
            let e = errno
            FS.remove(temp)
            try? await recorder.update { $0.destination = nil; $0.destinationFingerprint = nil }
            throw FileError(path: download.to, operation: "move the finished file into place", errno: e)
        }
        folders.add(folder)
        let copied = FS.fingerprint(destination)
        try await recorder.update(durable: false) { $0.destinationFingerprint = copied }
        FS.remove(dataPath)
    }

    /// Errors that more free space (or a writable file system) would cure.
    static func isSpaceError(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT || code == EROFS
    }

    /// The failure of a finished file that could not be copied beside its destination (the
    /// cache is on another file system); the file stays complete in the cache.
    func copyFailure(_ error: any Error, folder: String) -> SyncError {
        guard let error = error as? FileError else { return .other(message: "\(download.to): \(error)") }
        switch error.errno {
        case ENOSPC, EDQUOT:
            return .noSpace(path: folder, needed: nil, available: FreeSpace.available(at: folder), errno: error.errno,
                            during: .copy(entry: download.to))
        case EROFS:
            return .readOnly(path: folder, during: .copy(entry: download.to))
        default:
            return .copyFailed(error)
        }
    }
}
