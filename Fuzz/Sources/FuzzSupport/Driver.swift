#if canImport(Glibc)
import Glibc
#endif
import CFuzzer

/// Hands the process to libFuzzer with `testOneInput` as the target; its command line is
/// libFuzzer's (`-max_total_time=N`, corpus folders, or crash files to replay).
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}
