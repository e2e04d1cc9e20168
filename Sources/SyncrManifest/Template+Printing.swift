/// How manifest values print through Swift's own means (`dump`, `String(reflecting:)`, a
/// debugger's `po`): a library caller who prints a `Manifest` sees what syncr's messages show,
/// never an expanded `${VAR}` nor a password written out in the manifest.
extension Template: CustomDebugStringConvertible, CustomReflectable {
    /// The masked text, quoted.
    public var debugDescription: String { description.debugDescription }

    /// One child, the masked text: `expanded` and `secrets` stay out of `dump`.
    public var customMirror: Mirror {
        Mirror(self, children: ["written": description], displayStyle: .struct)
    }
}

extension Template {
    /// `written` with the passwords and tokens written out in it masked; a `${VAR}` in their
    /// place stays as written (its value is not there to mask).
    var masked: String {
        guard written.contains("@") || written.contains("=") else { return written }
        let literal = URLCredentials.secrets(in: written) + QueryCredentials.secrets(in: written)
        return literal.filter { !$0.contains("${") }.sorted { $0.count > $1.count }
            .reduce(written) { $0.replacingAll($1, with: "***") }
    }
}

extension Header: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Name: value`, with a credential written out in the value masked (`Authorization:
    /// Bearer ***`) as syncr's messages mask it, and a `${VAR}` as written.
    public var description: String { "\(name): \(maskedValue)" }

    /// The same as `description`, quoted.
    public var debugDescription: String { description.debugDescription }

    /// The name, and the value as `description` shows it.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "value": maskedValue], displayStyle: .struct)
    }

    private var maskedValue: String {
        var text = value.description
        for secret in maskedValues { text = text.replacingAll(secret, with: "***") }
        return text
    }
}

extension String {
    /// The text with every `target` replaced (Foundation's `replacingOccurrences`, which this
    /// module does without).
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = "", rest = Substring(self)
        while let found = rest.firstRange(of: target) {
            out += rest[..<found.lowerBound] + replacement
            rest = rest[found.upperBound...]
        }
        return out + rest
    }
}
