/// `package`: for this package's modules (the CLI sums with it too), not added to every
/// client's `Int64`.
extension Int64 {
    /// `self + other`, held at `Int64.max` (or `.min`) where it would overflow. For sums of
    /// sizes that servers give: a manifest of thousands of entries, each from a server that
    /// claims a size near 10^18, must give a plan and a warning, never end the run with a trap.
    package func clampedAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
