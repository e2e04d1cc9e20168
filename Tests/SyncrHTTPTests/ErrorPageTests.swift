import Testing
@testable import SyncrHTTP

/// An HTML error page is quoted by what it says, not by its markup.
@Suite(.timeLimit(.minutes(5)))
struct ErrorPageTests {
    static let nginx413 = """
        <html>\r
        <head><title>413 Request Entity Too Large</title></head>\r
        <body>\r
        <center><h1>413 Request Entity Too Large</h1></center>\r
        <hr><center>nginx/1.22.1</center>\r
        </body>\r
        </html>\r

        """

    @Test(arguments: [
        (nginx413, "413 Request Entity Too Large"),
        ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><TITLE>OperationalError at /upload</TITLE>"
            + "<style>body { color: red }</style></head><body><h1>OperationalError</h1></body></html>",
         "OperationalError at /upload"),
        ("<html><body><h1>Quota &amp; limits</h1><p>over</p></body></html>", "Quota & limits"),
        ("<html><head><title> </title><script>var x = '<b>';</script></head><body><p>Bucket   is\n full</p></body></html>",
         "Bucket is full"),
        // Cut off at the captured 1 KiB before the title ends: its text, without the markup.
        ("<html><head><title>Service Unavailable: the upstream", "Service Unavailable: the upstream"),
    ])
    func anHTMLPageIsSaidByItsTitle(page: String, said: String) {
        #expect(ErrorPage.summary(page) == said)
        #expect(HTTPResponse.errorText(Array(page.utf8)) == said)
    }

    @Test(arguments: ["{\"error\":\"<b>quota</b>\"}", "Not Found", "a < b and c > d", ""])
    func anythingElseIsKeptAsSent(body: String) {
        #expect(ErrorPage.summary(body) == nil)
        #expect(HTTPResponse.errorText(Array(body.utf8)) == HTTPResponse.printable(Array(body.utf8)))
    }
}
