import Testing
@testable import SyncrDigest
