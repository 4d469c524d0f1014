/// The state of one histogram series: per-bucket counts and the sum of observations.
///
/// Counts are kept per bucket (not cumulative) so that two values merge by addition;
/// ``TextFormat`` makes them cumulative on output.
public struct HistogramValue: Sendable, Equatable {
    /// Bucket upper bounds (inclusive), strictly increasing and finite; `+Inf` is implied.
    public var upperBounds: [Double]
    /// Observations per bucket, not cumulative; `upperBounds.count + 1` entries,
    /// the last one counting observations above every bound (the `+Inf` overflow).
    public var bucketCounts: [UInt64]
    /// The sum of all observed values.
    public var sum: Double

    /// An empty histogram. Bounds must be finite and strictly increasing (a precondition:
    /// they come from code).
    public init(upperBounds: [Double]) {
        for (index, bound) in upperBounds.enumerated() {
            precondition(bound.isFinite, "histogram bound \(bound) must be finite (+Inf is implied)")
            precondition(index == 0 || upperBounds[index - 1] < bound,
                         "histogram bounds must be strictly increasing: \(upperBounds)")
        }
        self.upperBounds = upperBounds
        self.bucketCounts = Array(repeating: 0, count: upperBounds.count + 1)
        self.sum = 0
    }

    /// Counts `value` in the first bucket whose bound is >= value (`le` semantics) and adds it
    /// to ``sum``. NaN goes to the overflow bucket, as in client_golang.
    public mutating func observe(_ value: Double) {
        bucketCounts[bucketIndex(for: value)] += 1
        sum += value
    }

    /// The number of observations.
    public var count: UInt64 {
        bucketCounts.reduce(0, +)
    }

    /// Adds the counts and sum of `other`, which must have the same bounds.
    public mutating func merge(_ other: HistogramValue) {
        precondition(upperBounds == other.upperBounds,
                     "cannot merge histograms with bounds \(upperBounds) and \(other.upperBounds)")
        for index in bucketCounts.indices {
            bucketCounts[index] += other.bucketCounts[index]
        }
        sum += other.sum
    }

    /// Cumulative counts in bound order, the last being ``count`` (the `+Inf` bucket).
    public var cumulativeCounts: [UInt64] {
        var total: UInt64 = 0
        return bucketCounts.map { count in
            total += count
            return total
        }
    }

    /// Binary search for the first bound >= value; the overflow index when there is none
    /// (including for NaN, which compares false with every bound).
    private func bucketIndex(for value: Double) -> Int {
        var low = 0
        var high = upperBounds.count
        while low < high {
            let middle = (low + high) / 2
            if upperBounds[middle] >= value {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return low
    }
}
