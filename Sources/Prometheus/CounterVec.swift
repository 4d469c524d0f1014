import Glibc
import Synchronization

/// A thread-safe counter with labels, one series per distinct list of label values.
///
/// Increments go to one of `shardCount` tables, chosen by the calling thread, each behind its
/// own lock; reads add the tables up. With a single lock, 64 connection threads on 2 processors
/// counting every request spun on it whenever its holder was preempted (`Mutex` on Linux spins
/// before it sleeps), a large share of the CPU serving `/-/healthy` in whole runs.
public final class CounterVec: MetricCollector {
    public let name: String
    public let help: String
    private let schema: LabelSchema
    private let shards: [Shard]

    private final class Shard: Sendable {
        let series = Mutex<[[String]: Double]>([:])
    }

    static let shardBits = 4
    static let shardCount = 1 << shardBits

    /// A counter with no series yet. `labelNames` are fixed; every call passes one value per name,
    /// in this order.
    public init(name: String, help: String, labelNames: [String]) {
        schema = LabelSchema(metric: name, names: labelNames)
        self.name = name
        self.help = help
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// The label names, in the order values are passed.
    public var labelNames: [String] { schema.names }

    /// Adds `amount` (>= 0) to the series with these label values, creating it at zero if new.
    public func inc(_ labels: [String], by amount: Double = 1) {
        schema.check(labels)
        precondition(amount >= 0, "\(name): counter increment must be >= 0, got \(amount)")
        shards[Self.shardOfCurrentThread()].series.withLock { $0[labels, default: 0] += amount }
    }

    /// The calling thread's shard: its pthread identity (the address of its control block)
    /// multiplied by a large odd constant, top bits, so that blocks a page or more apart spread.
    private static func shardOfCurrentThread() -> Int {
        Int(truncatingIfNeeded: (UInt64(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> (64 - shardBits))
    }

    /// Creates the series at zero if it does not exist, so known series are exported before
    /// their first event.
    public func initialize(_ labels: [String]) {
        schema.check(labels)
        // In the first shard: a series found there or elsewhere sums the same.
        shards[0].series.withLock { series in
            if series[labels] == nil { series[labels] = 0 }
        }
    }

    /// The value of one series (0 if it does not exist).
    public func value(_ labels: [String]) -> Double {
        schema.check(labels)
        return shards.reduce(0) { total, shard in total + shard.series.withLock { $0[labels] ?? 0 } }
    }

    /// The family with one sample per series.
    public func family() -> MetricFamily {
        var snapshot: [[String]: Double] = [:]
        for shard in shards {
            for (values, value) in shard.series.withLock({ $0 }) { snapshot[values, default: 0] += value }
        }
        return MetricFamily(name: name, help: help, type: .counter, samples: snapshot.map { values, value in
            Sample(labels: schema.labels(values), value: value)
        })
    }

    public func collect() -> [MetricFamily] {
        [family()]
    }
}
