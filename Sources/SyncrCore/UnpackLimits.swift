import SyncrArchive
import SyncrManifest

/// The extraction limits a user sets, with the setting named so that a refusal says how to
/// raise it.
extension ExtractionLimits {
    /// An `unzip: true` download: its `max_unpacked_size:`, and the destination's free space.
    public static func forDownload(_ download: Download) -> ExtractionLimits {
        ExtractionLimits(maxTotalBytes: download.maxUnpackedSize,
                         maxTotalBytesSetting: "max_unpacked_size",
                         maxTotalBytesRaise: "raise max_unpacked_size: on the entry for \(download.to)")
    }

    /// `syncr unzip --max-unpacked-size SIZE`, and the destination's free space. Its messages
    /// name the flags the user types, not the manifest's keys.
    public static func forUnzipCommand(maxUnpackedSize: Int64?) -> ExtractionLimits {
        ExtractionLimits(maxTotalBytes: maxUnpackedSize, maxTotalBytesSetting: "--max-unpacked-size",
                         maxTotalBytesRaise: "raise --max-unpacked-size", stripComponentsSetting: "--strip-components")
    }
}
