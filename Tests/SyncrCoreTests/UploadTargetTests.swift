import Testing
@testable import SyncrCore

/// Where a folder's file goes: its path joined to the `to:` URL's path, before the query.
@Suite(.timeLimit(.minutes(5))) struct UploadTargetTests {
    @Test(arguments: [
        ("http://h/d?t=1#f", "a/b.txt", "http://h/d/a/b.txt?t=1"),
        ("http://h/d/#f", "a.txt", "http://h/d/a.txt"),
        ("http://h/d/", "a.txt", "http://h/d/a.txt"),
        ("http://h/d?x=1&y=2", "a%20b.txt", "http://h/d/a%20b.txt?x=1&y=2"),
    ])
    func theFilesPathGoesBeforeTheQuery(base: String, relative: String, joined: String) {
        #expect(Uploader.join(base, relative) == joined)
    }
}
