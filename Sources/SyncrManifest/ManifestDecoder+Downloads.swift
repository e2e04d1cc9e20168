extension ManifestDecoder {
    /// Where each destination came from, to find two entries writing the same file, or one
    /// writing a file where another needs a folder.
    struct DestinationIndex {
        /// How an entry fills a folder, for messages.
        enum FolderKind {
            case unpacked, mirrored

            var words: String {
                switch self {
                case .unpacked: return "unpacks, replacing the folder as a whole"
                case .mirrored: return "mirrors an s3:// prefix into, where an object may take the same name"
                }
            }
        }

        struct Claim {
            var index: Int
            var line: Int
            /// A folder some destination lies under (the first entry that needs it), not a
            /// destination itself.
            var isFolder: Bool
            /// A destination that is a folder an entry fills: unpacked (and replaced as a
            /// whole), or mirrored from an `s3://` prefix.
            var wholeFolder: FolderKind?
            /// The path as the entry resolved it before links were followed (`LinkedFolders`):
            /// where it differs from a later entry's, a link made the two one.
            var lexical: String
        }
        /// Every destination, and every folder a destination lies under, by its path with links
        /// followed: one table, so that a path is hashed once whatever it turns out to be.
        var claims: [String: Claim] = [:]
        var links = LinkedFolders()
    }

    /// Decodes the `downloads:` sequence; entries with problems are reported and left out.
    mutating func decodeDownloads(_ node: YAMLNode, defaults: Settings) -> [Download] {
        let items: [YAMLNode]
        switch node.content {
        case .sequence(let s): items = s
        case .scalar(let s) where s.isNull: return []
        default:
            mismatch("downloads", expected: "a sequence", found: node)
            return []
        }
        var downloads: [Download] = []
        // As many as there are items (a few hundred bytes each): an array grown by doubling
        // would keep up to twice that for the whole run.
        downloads.reserveCapacity(items.count)
        var index = DestinationIndex()
        for (i, item) in items.enumerated() {
            if let download = decodeDownload(item, index: i, defaults: defaults, destinations: &index) {
                downloads.append(download)
            }
        }
        Download.markSharedURLs(&downloads)
        return downloads
    }

    /// One entry of `downloads:`.
    mutating func decodeDownload(_ node: YAMLNode, index: Int, defaults: Settings,
                                 destinations: inout DestinationIndex) -> Download?
    {
        let path = "downloads[\(index)]"
        guard let entries = mappingEntries(node, path: path, nullIsEmpty: false) else { return nil }
        var ok = true
        var url: Template?
        var urlMark: YAMLMark?
        var to: (text: String, mark: YAMLMark)?
        var allowOutside = false
        var unzip = false
        var stripComponents: (value: Int, mark: YAMLMark)?
        var maxUnpackedSize: (value: Int64, mark: YAMLMark)?
        var checksums: [Checksum] = []
        var overrides = SettingsOverrides()
        for entry in entries {
            let keyPath = Self.join(path, entry.key)
            switch entry.key {
            case "url":
                url = self.url(entry.value, path: keyPath)
                urlMark = entry.value.mark
                if url == nil { ok = false }
            case "to":
                if let text = pathText(entry.value, path: keyPath, expected: "a file path") {
                    to = (text, entry.value.mark)
                    if text.holdsReference {
                        report(keyPath, at: entry.value.mark,
                               "${...} is not expanded in a download's to: (only in url, headers and form fields), so this would make a folder named as written; write the path itself")
                        ok = false
                    }
                } else {
                    ok = false
                }
            case "sha256", "md5":
                let length = entry.key == "sha256" ? 64 : 32
                if let hex = hexDigest(entry.value, path: keyPath, length: length) {
                    checksums.append(entry.key == "sha256" ? .sha256(hex) : .md5(hex))
                } else {
                    ok = false
                }
            case "allow_outside":
                if let value = bool(entry.value, path: keyPath) { allowOutside = value } else { ok = false }
            case "unzip":
                if let value = bool(entry.value, path: keyPath) { unzip = value } else { ok = false }
            case "strip_components":
                if let value = integer(entry.value, path: keyPath, range: 0...64) {
                    stripComponents = (value, entry.keyMark)
                } else {
                    ok = false
                }
            case "max_unpacked_size":
                if let value = size(entry.value, path: keyPath, range: 1...Int64.max) {
                    maxUnpackedSize = (value, entry.keyMark)
                } else {
                    ok = false
                }
            default:
                let before = reported.count
                if !decodeSetting(entry, parent: path, runWide: false, into: &overrides) {
                    unknownKey(entry.key, at: entry.keyMark, parent: path, valid: ManifestKeys.download)
                }
                if reported.count != before { ok = false }
            }
        }
        for key in ManifestKeys.downloadRequired where !entries.contains(where: { $0.key == key }) {
            if !mergesBrokenAlias(node) { report(path, at: node.mark, "missing required key '\(key)'") }
            ok = false
        }

        if let strip = stripComponents, !unzip, strip.value > 0 {
            report(path + ".strip_components", at: strip.mark,
                   "strip_components applies only with unzip: true; remove it, or set unzip: true")
            ok = false
        }
        if let limit = maxUnpackedSize, !unzip {
            report(path + ".max_unpacked_size", at: limit.mark,
                   "max_unpacked_size applies only with unzip: true; remove it, or set unzip: true")
            ok = false
        }
        let prefix = url.flatMap { try? S3Location(parsing: $0.expanded) }?.isPrefix ?? false
        if let url, let urlMark, !checkS3Download(url, at: urlMark, path: path, entries: entries, unzip: unzip,
                                                  checksums: !checksums.isEmpty) {
            ok = false
        }
        // `to` is checked last: whether it may leave the folder depends on allow_outside, and
        // whether it may name a folder on unzip or an s3:// prefix.
        var destination: String?
        if let to {
            destination = self.destination(to.text, at: to.mark, path: path + ".to",
                                           allowOutside: allowOutside, folder: unzip || prefix)
            if let d = destination {
                let folderKind: DestinationIndex.FolderKind? = unzip ? .unpacked : prefix ? .mirrored : nil
                if !claim(d, written: to.text, at: to.mark, index: index, wholeFolder: folderKind, in: &destinations) {
                    ok = false
                }
            } else {
                ok = false
            }
        }
        guard ok, let url, let to, let destination else { return nil }
        var download = Download(index: index, location: entryStart(node.mark), url: url, to: to.text,
                                destination: destination, allowOutside: allowOutside, checksums: checksums,
                                settings: overrides.applied(to: defaults))
        download.unzip = unzip
        download.stripComponents = stripComponents?.value ?? 0
        download.maxUnpackedSize = maxUnpackedSize?.value
        return download
    }

    /// The URL: a template whose expansion must be an absolute http(s) URL with a host. Messages
    /// quote it as written, since the expanded form may hold secrets.
    mutating func url(_ node: YAMLNode, path: String) -> Template? {
        guard let template = template(node, path: path, url: true) else { return nil }
        if S3Location.isS3URL(template.expanded) || S3Location.isS3URL(template.written) {
            return s3URL(template, at: node.mark, path: path)
        }
        guard HTTPSyntax.isHTTPURL(template.expanded) else {
            let why = HTTPSyntax.urlProblem(template.expanded) ?? ""
            if template.hasReferences, template.expanded != template.written {
                report(path, at: node.mark,
                       "expected an http(s) URL, found \(Self.quoted(template.written)), which is not one once its ${...} references are expanded: \(why) (the expanded value is not shown)")
            } else {
                report(path, at: node.mark,
                       "expected an http(s) URL, found \(Self.quoted(template.written)): \(why)")
            }
            return nil
        }
        return template
    }

    /// A checksum of exactly `length` hex digits, lowercased.
    mutating func hexDigest(_ node: YAMLNode, path: String, length: Int) -> String? {
        guard let text = string(node, path: path, expected: "\(length) hex digits") else { return nil }
        var count = 0
        for s in text.unicodeScalars {
            count += 1
            guard s.properties.isASCIIHexDigit else {
                let advice = Self.digestPrefixAdvice(text, key: path.split(separator: ".").last.map(String.init) ?? "")
                report(path, at: node.mark, advice.map { "expected \(length) hex digits; \($0)" }
                    ?? "expected \(length) hex digits, found a non-hex character \(Self.quotedCharacter(s)) at position \(count)")
                return nil
            }
        }
        guard count == length else {
            report(path, at: node.mark, "expected \(length) hex digits, found \(count)" + Self.otherDigestHint(count))
            return nil
        }
        return text.lowercased()
    }

    /// A digest of the other algorithm's length was most likely written under the wrong key
    /// (a 32-digit MD5 under `sha256:`, as a release page lists them side by side).
    static func otherDigestHint(_ count: Int) -> String {
        switch count {
        case 32: return "; that is the length of an MD5: if it is one, write it as md5:"
        case 64: return "; that is the length of a SHA-256: if it is one, write it as sha256:"
        default: return ""
        }
    }

    /// What to do with a digest written with its algorithm in front: `sha256:e3b0...` as
    /// lockfiles and registries write it, `sha256-...` as SRI does (base64). Asked only of a
    /// value that is not hex: every entry's digest passes `hexDigest`.
    static func digestPrefixAdvice(_ text: String, key: String) -> String? {
        guard let mark = text.firstIndex(where: { $0 == ":" || $0 == "-" }),
              case let named = text[..<mark].lowercased(), ["sha256", "md5"].contains(named) else { return nil }
        if text[mark] == "-" {
            return "that is a Subresource Integrity value, whose digest is base64: give the digest in hex "
                + "(printf '%s' '\(text[text.index(after: mark)...])' | base64 -d | od -An -tx1 | tr -d ' \\n')"
        }
        return named != key ? "that is a \(named) digest: give it as \(named): instead" : "drop the '\(text[...mark])' in front"
    }

    /// The absolute, normalized destination of `to`, or nil after reporting why it is refused.
    /// - Parameter folder: the destination is a folder (`unzip: true`), so a trailing `/` is fine.
    mutating func destination(_ to: String, at mark: YAMLMark, path: String, allowOutside: Bool,
                              folder: Bool = false) -> String?
    {
        let resolved: String
        if LexicalPath.isPlainRelative(to) {
            // Resolves to a file strictly inside the folder: only the cache can be in the way.
            resolved = directory == "/" ? "/" + to : directory + "/" + to
            guard clearOfTheManifest(resolved, written: to, at: mark, path: path) else { return nil }
            return clearOfTheCache(resolved, written: to, at: mark, path: path, folder: folder) ? resolved : nil
        }
        let shown = Self.quoted(to)
        resolved = LexicalPath.resolve(to, against: directory)
        let last = to.split(separator: "/", omittingEmptySubsequences: false).last
        if resolved == "/" || resolved == directory {
            report(path, at: mark, folder ? "\(shown) is the manifest's own folder; unpack into a folder below it"
                                          : "\(shown) names a folder; give a file path")
            return nil
        }
        if folder, LexicalPath.isStrictlyInside(normalized: directory, folder: resolved) {
            // Unpacking replaces the folder as a whole: the manifest, its cache and everything
            // beside them would go.
            report(path, at: mark, "\(shown) holds the manifest's own folder, which unpacking into it would replace; unpack into a folder below the manifest's")
            return nil
        }
        guard clearOfTheManifest(resolved, written: to, at: mark, path: path),
              clearOfTheCache(resolved, written: to, at: mark, path: path, folder: folder) else { return nil }
        if !folder && (to.hasSuffix("/") || last == "." || last == "..") {
            report(path, at: mark, "\(shown) names a folder; give a file path (or set unzip: true to unpack into it)")
            return nil
        }
        if !allowOutside {
            let inside = LexicalPath.isStrictlyInside(normalized: resolved, folder: directory)
            if !inside {
                report(path, at: mark,
                       "\(shown) is outside the manifest's folder; set allow_outside: true on this entry if that is intended")
                return nil
            }
            if to.hasPrefix("/") {
                report(path, at: mark,
                       "\(shown) is an absolute path; write it relative to the manifest's folder, or set allow_outside: true on this entry if that is intended")
                return nil
            }
        }
        return resolved
    }

    /// Whether a destination is neither the manifest nor its lockfile: a download written over
    /// either left every later run nothing valid to read (exit 65).
    mutating func clearOfTheManifest(_ resolved: String, written: String, at mark: YAMLMark, path: String) -> Bool {
        if resolved == ownFiles.manifest {
            report(path, at: mark, "\(Self.quoted(written)) is this manifest itself; write the download somewhere else")
            return false
        }
        if resolved == ownFiles.lockfile {
            report(path, at: mark, "\(Self.quoted(written)) is this manifest's lockfile, which syncr lock writes; write the download somewhere else")
            return false
        }
        return true
    }

    /// Whether a destination stays clear of syncr's cache folder: a file there would be taken
    /// for (or overwrite) the cache's own, and a folder unpacked over it would replace it. A
    /// cache that is the manifest's folder, or above it (`cache: .`), holds every destination:
    /// there only the unpacked folders are checked (for holding the manifest's folder).
    mutating func clearOfTheCache(_ resolved: String, written: String, at mark: YAMLMark, path: String,
                                  folder: Bool) -> Bool {
        guard let cache = cacheDirectory else { return true }
        switch CacheClash.of(resolved, unpacked: folder, cache: cache) {
        case nil:
            return true
        case .inside?:
            report(path, at: mark, "\(Self.quoted(written)) is inside syncr's cache folder (\(cache)); write it somewhere else")
        case .holds? where folder:
            report(path, at: mark, "\(Self.quoted(written)) holds syncr's cache folder (\(cache)), which unpacking into it would replace; unpack into another folder, or move the cache (cache: in the manifest)")
        case .holds?:
            report(path, at: mark, "\(Self.quoted(written)) is a folder that holds syncr's cache folder (\(cache)), so no file can be written there; write it somewhere else, or move the cache (cache: in the manifest)")
        }
        return false
    }

    /// Records `destination` for entry `index`, reporting a clash with an earlier entry: the
    /// same path, or one inside the other, once links in existing folders are followed
    /// (`LinkedFolders`); a clash that only the links make says so.
    mutating func claim(_ lexical: String, written: String, at mark: YAMLMark, index: Int,
                        wholeFolder: DestinationIndex.FolderKind? = nil, in destinations: inout DestinationIndex) -> Bool
    {
        let destination = destinations.links.real(lexical)
        func refuse(_ message: String, linkedFrom other: DestinationIndex.Claim? = nil) -> Bool {
            var text = message
            if let other, other.lexical != lexical, !LexicalPath.isStrictlyInside(normalized: lexical, folder: other.lexical) {
                text += " (through a symbolic link: \(Self.quoted(written)) is \(destination))"
            }
            report("downloads[\(index)].to", at: mark, text)
            return false
        }
        if let found = destinations.claims.index(forKey: destination) {
            let (claimed, first) = destinations.claims[found]
            // `String` equality is Unicode's: "é" composed and decomposed are one key here and
            // two files on Linux. syncr keys them alike elsewhere too (lockfile, plan), so they
            // stay refused, with the reason.
            if !claimed.utf8.elementsEqual(destination.utf8) {
                let other = first.isFolder ? "a folder that downloads[\(first.index)] (line \(first.line)) writes into"
                    : "the to: of downloads[\(first.index)] (line \(first.line))"
                return refuse("\(Self.quoted(written)) differs from \(other) only in how its accented characters are composed (NFC or NFD); write both the same way, or give one another name")
            }
            if first.isFolder, let wholeFolder {
                return refuse("\(Self.quoted(written)) holds what downloads[\(first.index)] (line \(first.line)) writes, in the folder this entry \(wholeFolder.words); give one of them another place", linkedFrom: first)
            }
            return refuse(first.isFolder
                ? "\(Self.quoted(written)) is a folder that downloads[\(first.index)] (line \(first.line)) writes into; a path cannot be both a file and a folder"
                : "same destination as downloads[\(first.index)] (line \(first.line))", linkedFrom: first)
        }
        var ancestors: [(real: String, lexical: String)] = []
        var folder = LexicalPath.parent(of: destination)
        var lexicalFolder = LexicalPath.parent(of: lexical)
        while folder != "/" {
            if let found = destinations.claims.index(forKey: folder) {
                let (claimed, first) = destinations.claims[found]
                // A folder already claimed had its ancestors checked then, and no file can be
                // claimed where a folder is: the rest of the way up is known.
                if first.isFolder { break }
                if !claimed.utf8.elementsEqual(folder.utf8) {
                    return refuse("\(Self.quoted(written)) is in a folder whose name differs from the to: of downloads[\(first.index)] (line \(first.line)) only in how its accented characters are composed (NFC or NFD); write both the same way, or give one another name")
                }
                if let kind = first.wholeFolder {
                    return refuse("\(Self.quoted(written)) is inside the folder that downloads[\(first.index)] (line \(first.line)) \(kind.words); write it somewhere else", linkedFrom: first)
                }
                return refuse("\(Self.quoted(written)) needs a folder where downloads[\(first.index)] (line \(first.line)) writes a file; a path cannot be both a file and a folder", linkedFrom: first)
            }
            ancestors.append((folder, lexicalFolder))
            folder = LexicalPath.parent(of: folder)
            lexicalFolder = LexicalPath.parent(of: lexicalFolder)
        }
        destinations.claims[destination] = DestinationIndex.Claim(index: index, line: mark.line, isFolder: false,
                                                                  wholeFolder: wholeFolder, lexical: lexical)
        for a in ancestors {
            destinations.claims[a.real] = DestinationIndex.Claim(index: index, line: mark.line, isFolder: true, lexical: a.lexical)
        }
        return true
    }

    /// Where a sequence entry starts: the `-` before its mapping when there is one on the same
    /// line (libyaml's mapping mark is at the first key).
    func entryStart(_ mark: YAMLMark) -> SourceLocation {
        var column = mark.column
        if let bounds = lineBounds(mark.line) {
            // libyaml counts columns in characters: walk the line's bytes up to the mark,
            // counting the first byte of each character, and keep the last one not blank.
            var scalar = 0
            var lastNonBlank: (index: Int, byte: UInt8)?
            var i = bounds.lowerBound
            while i < bounds.upperBound && scalar < mark.column - 1 {
                let byte = bytes[i]
                if byte & 0xC0 != 0x80 {
                    if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { lastNonBlank = (scalar, byte) }
                    scalar += 1
                }
                i += 1
            }
            if let last = lastNonBlank, last.byte == UInt8(ascii: "-") { column = last.index + 1 }
        }
        return SourceLocation(file: file, line: mark.line, column: column)
    }

    static func quotedCharacter(_ s: Unicode.Scalar) -> String {
        let q = quoted(String(s))
        return "'" + q.dropFirst().dropLast() + "'"
    }
}
