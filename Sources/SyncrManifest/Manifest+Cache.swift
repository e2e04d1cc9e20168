extension Manifest {
    /// The downloads that a cache folder given on the command line (`--cache DIR`, absolute or
    /// relative to the current folder) would clash with: a destination inside it, or an unpacked
    /// folder holding it. The manifest's own `cache:` was checked when it was read; a folder
    /// that is the manifest's or above it holds every destination and is not checked.
    public func downloads(clashingWithCache cache: String) -> [Download] {
        let folder = LexicalPath.resolve(cache, against: FileBytes.currentDirectory())
        guard !LexicalPath.isSelfOrAncestor(folder, of: directory) else { return [] }
        return downloads.filter { d in
            d.destination == folder || LexicalPath.isStrictlyInside(normalized: d.destination, folder: folder)
                || (d.unzip && LexicalPath.isStrictlyInside(normalized: folder, folder: d.destination))
        }
    }
}
