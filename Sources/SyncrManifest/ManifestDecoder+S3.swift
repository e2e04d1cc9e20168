extension ManifestDecoder {
    /// The `s3:` block: `endpoint`, `region`, `path_style`, `profile`, `anonymous`.
    mutating func s3Settings(_ node: YAMLNode, path: String) -> S3Settings? {
        guard let entries = mappingEntries(node, path: path, nullIsEmpty: true) else { return nil }
        var settings = S3Settings()
        let before = reported.count
        for entry in entries {
            let keyPath = Self.join(path, entry.key)
            switch entry.key {
            case "endpoint":
                settings.endpoint = s3Endpoint(entry.value, path: keyPath)
            case "region":
                settings.region = s3Name(entry.value, path: keyPath, what: "a region like eu-west-1",
                                         allowed: { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            case "path_style":
                settings.pathStyle = bool(entry.value, path: keyPath)
            case "profile":
                settings.profile = s3Name(entry.value, path: keyPath, what: "a profile name",
                                          allowed: { !$0.isWhitespace && $0 != "[" && $0 != "]" })
            case "anonymous":
                settings.anonymous = bool(entry.value, path: keyPath)
            default:
                unknownKey(entry.key, at: entry.keyMark, parent: path, valid: ManifestKeys.s3)
            }
        }
        return reported.count == before ? settings : nil
    }

    /// `endpoint:` an absolute http(s) URL, without query or fragment.
    mutating func s3Endpoint(_ node: YAMLNode, path: String) -> String? {
        let expected = "an http(s) URL like http://127.0.0.1:8333"
        guard let text = string(node, path: path, expected: expected) else { return nil }
        guard HTTPSyntax.isHTTPURL(text), !text.contains("?"), !text.contains("#"), !text.contains("@") else {
            report(path, at: node.mark, "expected \(expected) (no user, query or fragment), found \(Self.quoted(text))")
            return nil
        }
        return text
    }

    /// A non-empty name whose characters pass `allowed`.
    mutating func s3Name(_ node: YAMLNode, path: String, what: String, allowed: (Character) -> Bool) -> String? {
        guard let text = string(node, path: path, expected: what) else { return nil }
        guard !text.isEmpty, text.allSatisfy(allowed) else {
            report(path, at: node.mark, "expected \(what), found \(Self.quoted(text))")
            return nil
        }
        return text
    }

    /// An `s3://bucket/key` URL, checked; nil after reporting what is wrong.
    mutating func s3URL(_ template: Template, at mark: YAMLMark, path: String) -> Template? {
        do {
            _ = try S3Location(parsing: template.expanded)
            return template
        } catch {
            let shown = Self.quoted(template.written)
            // The expanded value is not shown: a ${...} may hold a secret.
            report(path, at: mark, template.hasReferences
                   ? "\(shown) is not a valid s3:// URL once its ${...} references are expanded: \(error.descriptionWithoutValues)"
                   : "\(shown) is not a valid s3:// URL: \(error)")
            return nil
        }
    }
}

extension ManifestDecoder {
    /// S3 part sizes: S3 refuses parts under 5 MiB (but the last) and over 5 GiB.
    static let partSizeRange: ClosedRange<Int64> = (5 << 20)...(5 << 30)
    /// A single PutObject takes at most 5 GiB.
    static let multipartThresholdRange: ClosedRange<Int64> = (5 << 20)...(5 << 30)

    /// What an `s3://` download cannot combine with, and `s3:` on an http(s) entry.
    /// - Returns: false after reporting a problem.
    mutating func checkS3Download(_ url: Template, at mark: YAMLMark, path: String, entries: [Entry], unzip: Bool,
                                  checksums: Bool) -> Bool {
        guard let location = try? S3Location(parsing: url.expanded) else {
            return refuseS3Block(entries, path: path)
        }
        guard location.isPrefix else { return true }
        if unzip || checksums {
            report(Self.join(path, "url"), at: mark,
                   "\(Self.quoted(url.written)) names every object under a prefix (it ends in '/'); "
                   + (unzip ? "unzip: true" : "a checksum") + " applies to one object: name the object, or remove it")
            return false
        }
        return true
    }

    /// `s3:` set on an entry whose URL is not `s3://`.
    mutating func refuseS3Block(_ entries: [Entry], path: String) -> Bool {
        guard let entry = entries.first(where: { $0.key == "s3" }) else { return true }
        report(Self.join(path, "s3"), at: entry.keyMark,
               "s3 applies only to s3:// URLs; remove it, or write the URL as s3://bucket/key")
        return false
    }

    /// An upload's keys checked against its target: `multipart_threshold` and `part_size` for
    /// `s3://` only, the form keys (and `method`, `retry`) never with it.
    /// - Returns: the threshold and part size (defaults where not given), nil after reporting.
    mutating func s3UploadKeys(_ entries: [Entry], path: String, s3: Bool) -> (threshold: Int64, partSize: Int64)? {
        var threshold = Upload.defaultMultipartThreshold, partSize = Upload.defaultPartSize
        let before = reported.count
        for entry in entries {
            let keyPath = Self.join(path, entry.key)
            if s3, ManifestKeys.notForS3Uploads.contains(entry.key) {
                report(keyPath, at: entry.keyMark,
                       "\(entry.key) does not apply to an s3:// target (an object store takes PutObject or a multipart upload, never a form or another method); remove it")
            } else if !s3, ManifestKeys.s3UploadOnly.contains(entry.key) {
                report(keyPath, at: entry.keyMark, "\(entry.key) applies only to an s3:// target; remove it")
            } else if entry.key == "multipart_threshold" {
                threshold = size(entry.value, path: keyPath, range: Self.multipartThresholdRange) ?? threshold
            } else if entry.key == "part_size" {
                partSize = size(entry.value, path: keyPath, range: Self.partSizeRange) ?? partSize
            }
        }
        if !s3, !refuseS3Block(entries, path: path) { return nil }
        return reported.count == before ? (threshold, partSize) : nil
    }
}
