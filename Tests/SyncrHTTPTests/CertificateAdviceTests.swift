import Testing
@testable import SyncrHTTP

/// The advice after a certificate that could not be verified fits what was wrong with it.
@Suite(.timeLimit(.minutes(5)))
struct CertificateAdviceTests {
    @Test(arguments: [
        ("SSL certificate problem: certificate has expired", "has expired: its server must be given a new one"),
        ("SSL certificate problem: certificate is not yet valid", "not valid yet: check this machine's clock"),
        ("SSL: no alternative certificate subject name matches target host name '127.0.0.1'", "for another name"),
        ("SSL certificate problem: unable to get local issuer certificate", "trust it with ca_cert: FILE"),
        ("SSL certificate problem: self-signed certificate", "trust it with ca_cert: FILE"),
    ])
    func adviceFitsTheReason(detail: String, advice: String) {
        #expect(CertificateAdvice.advice(for: detail).contains(advice))
    }
}
