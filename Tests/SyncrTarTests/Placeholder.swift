import Testing
@testable import SyncrArchive
