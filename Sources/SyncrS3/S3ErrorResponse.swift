/// The XML body S3 answers a failed request with:
/// `<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>...</Error>`.
public struct S3ErrorResponse: Sendable, Equatable {
    /// `NoSuchBucket`, `NoSuchKey`, `AccessDenied`, `SignatureDoesNotMatch`, `SlowDown`, ...
    public var code: String
    public var message: String

    /// Creates an error answer.
    public init(code: String, message: String = "") {
        self.code = code
        self.message = message
    }

    /// Reads the code and message from a body (or its printable start); nil when it is not an
    /// S3 error document.
    public init?(parsing body: String) {
        guard let code = Self.element("Code", in: body), !code.isEmpty else { return nil }
        self.code = code
        message = Self.element("Message", in: body) ?? ""
    }

    /// What the operator should do about it, beyond S3's own message.
    public func advice(credentials: S3Credentials?) -> String? {
        let source = credentials.map { "the credentials used: \($0)" } ?? "the request was anonymous (anonymous: true)"
        switch code {
        case "NoSuchBucket": return "check the bucket name, and the endpoint and region under s3:"
        case "NoSuchKey": return "check the key; keys are case-sensitive"
        case "AccessDenied", "AllAccessDisabled", "AccountProblem":
            return "\(source); check that they may read or write this object"
        case "SignatureDoesNotMatch": return "\(source); check the secret access key, and the region under s3:"
        case "InvalidAccessKeyId": return "\(source); the store does not know this access key"
        case "ExpiredToken", "InvalidToken", "TokenRefreshRequired": return "\(source); get a new session token"
        case "RequestTimeTooSkewed": return "this machine's clock is off; correct it"
        case "AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException":
            return "the bucket is in another region: set region: under s3:"
        default: return nil
        }
    }

    /// The text of the first `<name>` element, its entities decoded.
    static func element(_ name: String, in body: String) -> String? {
        guard let open = body.firstRange(of: "<\(name)>"),
              let close = body[open.upperBound...].firstRange(of: "</\(name)>") else { return nil }
        return unescaped(body[open.upperBound..<close.lowerBound])
    }

    /// XML's five named entities and numeric character references (`&#34;`, `&#x22;`: Go's
    /// encoder, which SeaweedFS uses, writes quotes that way).
    static func unescaped(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        let named = ["lt": "<", "gt": ">", "quot": "\"", "apos": "'", "amp": "&"]
        var out = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            guard let semi = after.prefix(10).firstIndex(of: ";") else { out += "&"; rest = after; continue }
            let name = String(after[..<semi])
            var decoded = named[name]
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                decoded = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
            } else if name.hasPrefix("#") {
                decoded = UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
            }
            if let decoded {
                out += decoded
                rest = after[after.index(after: semi)...]
            } else {
                out += "&"
                rest = after
            }
        }
        return out + rest
    }
}

extension String {
    func replacingAll(_ target: String, _ replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        var rest = self[...]
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
