/// Identifies one version of a file cheaply: if any of these changed, the content may have.
public struct FileFingerprint: Codable, Sendable, Equatable {
    /// `st_dev`: the file system the file is on.
    public var device: UInt64
    /// `st_ino`: a replaced file (a rename over it) gets a new inode even when size and time match.
    public var inode: UInt64
    /// Size in bytes.
    public var size: Int64
    /// Modification time in nanoseconds since the epoch.
    public var mtimeNanoseconds: Int64

    /// Creates a fingerprint from its parts, as `lstat` gives them.
    public init(device: UInt64, inode: UInt64, size: Int64, mtimeNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
    }
}
