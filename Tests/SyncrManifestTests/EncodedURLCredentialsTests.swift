import Testing
@testable import SyncrManifest

/// The user information of a URL carried percent-encoded in another one's query is masked like
/// that of a URL as written: a redirect's `?to=` or a login's `?next=` echoed in an error.
@Suite(.timeLimit(.minutes(5)))
struct EncodedURLCredentialsTests {
    @Test(arguments: [
        ("https://h/dl?to=https%3A%2F%2Fuser%3Apw9Secret%40cdn.example%2Ff.bin",
         "https://h/dl?to=https%3A%2F%2Fuser%3A***%40cdn.example%2Ff.bin"),
        // Lower-case hex, a port after the host (its `:` is not the user's), the next parameter.
        ("https://h/dl?to=https%3a%2f%2fuser%3apw9Secret%40cdn%3a8443%2ff&v=1",
         "https://h/dl?to=https%3a%2f%2fuser%3a***%40cdn%3a8443%2ff&v=1"),
        // A lone token before the `@`.
        ("?next=https%3A%2F%2Fghp_tok3nValue%40github.com%2Fo%2Fr", "?next=https%3A%2F%2F***%40github.com%2Fo%2Fr"),
        // Encoded twice: two URLs down.
        ("?a=x%3Fb%3Dhttps%253A%252F%252Fu%253Asecr3t%2540host%252Fp",
         "?a=x%3Fb%3Dhttps%253A%252F%252Fu%253A***%2540host%252Fp"),
        // The authority ends at the raw `&`: no `@` in it, nothing to mask.
        ("?to=https%3A%2F%2Fcdn.example&who=me%40example.com", "?to=https%3A%2F%2Fcdn.example&who=me%40example.com"),
        // No user information, or an `@` only in the path.
        ("?to=https%3A%2F%2Fcdn.example%2Fa%40b", "?to=https%3A%2F%2Fcdn.example%2Fa%40b"),
        ("100% sure: %3A%2F%2F", "100% sure: %3A%2F%2F"),
    ])
    func encodedUserInformationIsMasked(text: String, shown: String) {
        #expect(URLCredentials.masked(text) == shown)
        #expect(URLCredentials.masked(shown) == shown, "masking twice changes nothing")
    }

    /// Written in a manifest's URL, the password is a secret as written and as each decoding
    /// shows it: a server may echo any of them.
    @Test func encodedPasswordsAreSecrets() {
        let secrets = URLCredentials.secrets(in: "https://h/dl?to=https%3A%2F%2Fu%3Apw%2521long9%40cdn%2Ff")
        #expect(Set(secrets) == ["pw%2521long9", "pw%21long9", "pw!long9"])
    }
}
