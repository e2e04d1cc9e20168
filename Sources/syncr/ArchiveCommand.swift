import SyncrCore
import SyncrManifest

/// `syncr zip` and `syncr unzip`: the archive code of SyncrCore, with a line on success.
enum ArchiveCommand {
    static func unzip(_ options: UnzipOptions) -> Int32 {
        do {
            let summary = try ArchiveCommands.unzip(archive: options.archive, destination: options.destination,
                                                    stripComponents: options.stripComponents,
                                                    maxUnpackedSize: options.maxUnpackedSize, replace: options.replace)
            if !options.quiet {
                Output.err("syncr: unpacked \(summary.entries) entr\(summary.entries == 1 ? "y" : "ies") "
                    + "(\(summary.files) file\(summary.files == 1 ? "" : "s"), "
                    + "\(ByteSize.format(summary.bytes))) into \(options.destination)")
            }
            // Said even with --quiet, like a warning: a file left out is worth a line.
            for note in summary.notes { Output.err("syncr: note: \(Rendering.printable(note))") }
            return ExitCode.success
        } catch {
            // The name of a file found in DEST_DIR is shown as it is on disk: escaped.
            Output.err("syncr: error: \(Rendering.printable(error.description))")
            return ExitCode.failures
        }
    }

    static func zip(_ options: ZipOptions) -> Int32 {
        do {
            let summary = try ArchiveCommands.zip(directory: options.source, output: options.output,
                                                  deterministic: options.deterministic)
            if !options.quiet { Output.err("syncr: wrote \(options.output): \(summary)") }
            return ExitCode.success
        } catch {
            Output.err("syncr: error: \(error.description)")
            return ExitCode.failures
        }
    }
}
