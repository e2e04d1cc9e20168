extension ManifestDecoder {
    /// The first entry of each (method, source, URL), to find the same upload written twice.
    struct UploadIndex {
        struct Key: Hashable {
            var method: Upload.Method
            var source: String
            /// The expanded URL: two spellings that expand to the same URL are the same upload.
            /// Used only as a key, never printed.
            var url: String
        }
        struct Claim {
            var index: Int
            var line: Int
        }
        var claims: [Key: Claim] = [:]
        /// The first PUT (or s3://) entry of each target URL, expanded: two files put to one
        /// URL replace each other on every run, and neither is ever up to date.
        var putTargets: [String: Claim] = [:]
    }

    /// Decodes the `uploads:` sequence; entries with problems are reported and left out.
    mutating func decodeUploads(_ node: YAMLNode, defaults: Settings) -> [Upload] {
        let items: [YAMLNode]
        switch node.content {
        case .sequence(let s): items = s
        case .scalar(let s) where s.isNull: return []
        default:
            mismatch("uploads", expected: "a sequence", found: node)
            return []
        }
        var uploads: [Upload] = []
        var index = UploadIndex()
        for (i, item) in items.enumerated() {
            if let upload = decodeUpload(item, index: i, defaults: defaults, seen: &index) {
                uploads.append(upload)
            }
        }
        return uploads
    }

    /// One entry of `uploads:`.
    mutating func decodeUpload(_ node: YAMLNode, index: Int, defaults: Settings,
                               seen: inout UploadIndex) -> Upload?
    {
        let path = "uploads[\(index)]"
        guard let entries = mappingEntries(node, path: path, nullIsEmpty: false) else { return nil }
        var ok = true
        var from: (written: String, source: String)?
        var url: Template?
        // nil until `method:` is read (then post is meant). A `method:` that is not valid leaves
        // `methodKnown` false: the post-only keys are then checked on their own rather than
        // refused on a guess, and no duplicate is claimed for a method nobody knows.
        var method: Upload.Method?
        var methodKnown = true
        var contentType: String?
        var zip: Bool?
        var deterministic: (value: Bool, entry: Entry)?
        var postOnly: [Entry] = []
        var overrides = SettingsOverrides()
        var seenKeys: Set<String> = []

        for entry in entries {
            seenKeys.insert(entry.key)
            let keyPath = Self.join(path, entry.key)
            switch entry.key {
            case "from":
                from = uploadSource(entry.value, path: keyPath)
                if from == nil { ok = false }
            case "to":
                url = self.url(entry.value, path: keyPath)
                if url == nil { ok = false }
            case "method":
                method = uploadMethod(entry.value, path: keyPath)
                if method == nil {
                    methodKnown = false
                    ok = false
                }
            case "field", "fields", "retry":
                // Decoded once the method is known: it may be written after them.
                postOnly.append(entry)
            case "content_type":
                contentType = mediaType(entry.value, path: keyPath)
                if contentType == nil { ok = false }
            case "zip":
                zip = bool(entry.value, path: keyPath)
                if zip == nil { ok = false }
            case "multipart_threshold", "part_size":
                break  // checked with the target, by s3UploadKeys
            case "deterministic":
                if let value = bool(entry.value, path: keyPath) {
                    deterministic = (value, entry)
                } else {
                    ok = false
                }
            default:
                if ManifestKeys.downloadOnlySettings.contains(entry.key) {
                    report(keyPath, at: entry.keyMark,
                           "\(entry.key) applies to downloads only; an upload is sent as one request, so remove it here")
                    ok = false
                    continue
                }
                let before = reported.count
                if decodeSetting(entry, parent: path, runWide: false, into: &overrides) {
                    if entry.key == "headers" { refuseContentTypeHeader(entry.value, path: keyPath) }
                } else {
                    unknownKey(entry.key, at: entry.keyMark, parent: path, valid: ManifestKeys.upload)
                }
                if reported.count != before { ok = false }
            }
        }
        for key in ManifestKeys.uploadRequired where !seenKeys.contains(key) {
            if !mergesBrokenAlias(node) { report(path, at: node.mark, "missing required key '\(key)'") }
            ok = false
        }

        var field = Upload.defaultField
        var fields: [Upload.FormField] = []
        var retryPost = false
        for entry in postOnly {
            let keyPath = Self.join(path, entry.key)
            if method == .put {
                report(keyPath, at: entry.keyMark,
                       "\(entry.key) applies to method: post only; remove it, or set method: post")
                ok = false
                continue
            }
            switch entry.key {
            case "field":
                if let text = string(entry.value, path: keyPath, expected: "a form field name"),
                   let name = formName(text, path: keyPath, at: entry.value.mark)
                {
                    field = name
                } else {
                    ok = false
                }
            case "fields":
                if let list = formFields(entry.value, path: keyPath) { fields = list } else { ok = false }
            default:  // "retry"
                if let value = bool(entry.value, path: keyPath) { retryPost = value } else { ok = false }
            }
        }

        // A `zip:` that failed to decode was reported already; do not pile on.
        let zipFailed = seenKeys.contains("zip") && zip == nil
        if let deterministic, zip != true, !zipFailed {
            report(Self.join(path, "deterministic"), at: deterministic.entry.keyMark,
                   "deterministic applies only with zip: true; remove it, or set zip: true")
            ok = false
        }

        if let from, let url, methodKnown {
            let key = UploadIndex.Key(method: method ?? .post, source: from.source, url: url.expanded)
            if let first = seen.claims[key] {
                report(path, at: node.mark,
                       "same method, from and to as uploads[\(first.index)] (line \(first.line)); remove one of them")
                ok = false
            } else {
                seen.claims[key] = UploadIndex.Claim(index: index, line: node.mark.line)
            }
            if ok, !claimPutTarget(url, source: from.source, method: method, zip: zip == true, path: path, at: node.mark,
                                   index: index, seen: &seen) {
                ok = false
            }
        }

        let s3 = url.map { S3Location.isS3URL($0.expanded) } ?? false
        let parts = s3UploadKeys(entries, path: path, s3: s3)
        guard ok, let from, let url, let parts else { return nil }
        var settings = overrides.applied(to: defaults)
        // The entry's own Content-Type was refused above, so one here came from `defaults:`,
        // where downloads may need it (an API). An upload sets its own (a post's is
        // multipart/form-data with the body's boundary, a put's is `content_type:`): the
        // default one replaced it, and the server could not read a post's body.
        settings.headers.removeAll { $0.name.lowercased() == "content-type" }
        var upload = Upload(index: index, location: entryStart(node.mark), from: from.written,
                            source: from.source, url: url, method: s3 ? .put : method ?? .post, field: field,
                            fields: fields, contentType: contentType, retryPost: retryPost,
                            zip: zip ?? false, deterministic: deterministic?.value ?? true,
                            settings: settings)
        (upload.multipartThreshold, upload.partSize) = parts
        return upload
    }

    /// Claims the object or file a PUT (or `s3://`) upload writes; false, reported, when an
    /// earlier entry writes it: each run would replace the other's. A target ending in `/` (or
    /// an `s3://` bucket itself) takes a folder's files under their own names, so folders may
    /// share it, but not two archives of one name. A POST endpoint may take many files.
    mutating func claimPutTarget(_ url: Template, source: String, method: Upload.Method?, zip: Bool, path: String,
                                 at mark: YAMLMark, index: Int, seen: inout UploadIndex) -> Bool {
        let s3 = S3Location.isS3URL(url.expanded)
        let prefix = s3 ? (try? S3Location(parsing: url.expanded))?.isPrefix ?? false : url.expanded.hasSuffix("/")
        let archive = s3 && prefix && zip ? Upload.archiveName(source: source) : nil
        guard method == .put || s3, !prefix || archive != nil else { return true }
        let target = archive.map { Self.joinKey(url.expanded, $0) } ?? url.expanded
        guard let first = seen.putTargets[target] else {
            seen.putTargets[target] = UploadIndex.Claim(index: index, line: mark.line)
            return true
        }
        // As written: the expanded URL may hold a secret.
        let same = archive.map { "same object (\(Self.joinKey(url.written, $0))) as" } ?? "same to as"
        report(path, at: mark,
               "\(same) uploads[\(first.index)] (line \(first.line)): each run would replace the other's file there, and neither would ever be up to date; give each its own to:")
        return false
    }

    /// `name` under the `s3://` prefix or bucket `url` (`s3://b`, `s3://b/`, `s3://b/p/`).
    static func joinKey(_ url: String, _ name: String) -> String {
        let bucketOnly = url.dropFirst(5).firstIndex(of: "/") == nil
        return url + (bucketOnly ? "/" : "") + name
    }

    /// `from`: a file or folder, as written and resolved. Unlike a download's `to` it may be
    /// absolute or leave the manifest's folder (reading is harmless), and it is not checked for
    /// existence here: the planner does that when it runs.
    mutating func uploadSource(_ node: YAMLNode, path: String) -> (written: String, source: String)? {
        guard let text = pathText(node, path: path, expected: "a file or folder path") else { return nil }
        guard !text.holdsReference else {
            report(path, at: node.mark, "${...} is not expanded in an upload's from: (only in to, headers and form fields); write the path itself")
            return nil
        }
        return (text, LexicalPath.resolve(text, against: directory))
    }

    /// `post` or `put`, in any case: HTTP spells methods in capitals, so `POST` is accepted too.
    mutating func uploadMethod(_ node: YAMLNode, path: String) -> Upload.Method? {
        guard let text = string(node, path: path, expected: "post or put") else { return nil }
        guard let method = Upload.Method(rawValue: text.lowercased()) else {
            report(path, at: node.mark, "expected post or put, found \(Self.describe(node))")
            return nil
        }
        return method
    }

    /// A form field name: it is sent inside `Content-Disposition: form-data; name="..."`
    /// (RFC 7578 §4.2), so a `"` or a control character (CR, LF, NUL, ...) would end the quoted
    /// string or the header line early. Anything else goes (`files[]` is common).
    mutating func formName(_ text: String, path: String, at mark: YAMLMark) -> String? {
        guard !text.isEmpty else {
            report(path, at: mark, "expected a form field name, found an empty string")
            return nil
        }
        guard !text.unicodeScalars.contains(where: { $0 == "\"" || Self.isControl($0) }) else {
            report(path, at: mark,
                   "\(Self.quoted(text)) is not a valid form field name; it cannot contain '\"', a line break or another control character")
            return nil
        }
        return text
    }

    /// `fields:`, a mapping of form field name to value, in order. Values may use `${VAR}`; a
    /// value with CR, LF or NUL is refused (after expansion too, saying so without showing it),
    /// the same rule as header values.
    mutating func formFields(_ node: YAMLNode, path: String) -> [Upload.FormField]? {
        guard let entries = mappingEntries(node, path: path, nullIsEmpty: true) else { return nil }
        var result: [Upload.FormField] = []
        var ok = true
        for entry in entries {
            let fieldPath = Self.join(path, entry.key)
            guard let name = formName(entry.key, path: fieldPath, at: entry.keyMark) else {
                ok = false
                continue
            }
            guard let written = string(entry.value, path: fieldPath) else {
                ok = false
                continue
            }
            guard !HTTPSyntax.hasLineBreak(written) else {
                report(fieldPath, at: entry.value.mark, "a form field value cannot contain a line break or NUL")
                ok = false
                continue
            }
            guard let value = template(entry.value, path: fieldPath) else {
                ok = false
                continue
            }
            guard !HTTPSyntax.hasLineBreak(value.expanded) else {
                // The expanded value is a secret: say what is wrong, never what it is.
                report(fieldPath, at: entry.value.mark,
                       "the value contains a line break or NUL after expanding its ${...} references (the value is not shown)")
                ok = false
                continue
            }
            result.append(Upload.FormField(name: name, value: value))
        }
        return ok ? result : nil
    }

    /// `content_type:`, a media type `type/subtype` with optional `; parameters` (RFC 9110
    /// §8.3.1). Only the shape is checked: both parts HTTP tokens, no line break or NUL anywhere,
    /// since the value ends up in a header.
    mutating func mediaType(_ node: YAMLNode, path: String) -> String? {
        let expected = "a media type like application/x-tar"
        guard let text = string(node, path: path, expected: expected) else { return nil }
        guard !HTTPSyntax.hasLineBreak(text) else {
            report(path, at: node.mark, "a content type cannot contain a line break or NUL")
            return nil
        }
        guard HTTPSyntax.isMediaType(text) else {
            report(path, at: node.mark, "expected \(expected), found \(Self.describe(node))")
            return nil
        }
        return text
    }

    /// An upload's own `Content-Type` header would fight the one syncr sets: with `post` it must
    /// be `multipart/form-data` with the body's boundary, and the file's type belongs in
    /// `content_type:`. (A `Content-Type` under `defaults:` is left alone: downloads send it,
    /// and uploads drop it.)
    mutating func refuseContentTypeHeader(_ node: YAMLNode, path: String) {
        for key in Self.keysWithMerges(node) {
            guard let name = key.scalar?.text, name.lowercased() == "content-type" else { continue }
            report(Self.join(path, name), at: key.mark,
                   "set the file's type with content_type: instead of a Content-Type header (a post's Content-Type is multipart/form-data with its boundary)")
        }
    }

    static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || s.value == 0x7F
    }
}
