import Foundation

/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny, fast PRNG whose whole state is one
/// `UInt64`, so a seed fixes every choice the demo makes. Our own helpers below (not the
/// standard library's `random(in:using:)`, whose algorithm may change between Swift releases)
/// keep a seed's output the same on every toolchain and platform.
struct DemoRandom: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    mutating func double(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// Uniform in `range` (Lemire's multiply-shift; the bias is below 2^-32 for our small ranges).
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next().multipliedFullWidth(by: span).high)
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// Exponentially distributed with this mean: the gaps of a Poisson process.
    mutating func exponential(mean: Double) -> Double { -mean * log(1 - unit()) }

    /// Log-normal around `median`: how network latencies spread (a long right tail).
    mutating func logNormal(median: Double, sigma: Double) -> Double {
        // Box–Muller; 1 - unit() is in (0, 1], so log never sees 0.
        let z = (-2 * log(1 - unit())).squareRoot() * cos(2 * Double.pi * unit())
        return median * exp(sigma * z)
    }

    /// `count` random bytes as lowercase hex: an APNs push token is 32 bytes, 64 hex digits.
    mutating func hex(bytes count: Int) -> String {
        var out = ""
        out.reserveCapacity(count * 2)
        var word = next()
        for i in 0..<count {
            if i > 0, i % 8 == 0 { word = next() }
            let byte = UInt8(truncatingIfNeeded: word >> (8 * UInt64(i % 8)))
            out += String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }
        return out
    }

    /// A version-4 UUID in ActivityKit's `Activity.id` form (uppercase).
    mutating func uuid() -> String {
        var h = Array(hex(bytes: 16).uppercased())
        h[12] = "4"
        h[16] = ["8", "9", "A", "B"][Int(next() % 4)]
        let s = String(h)
        func part(_ from: Int, _ to: Int) -> Substring {
            s[s.index(s.startIndex, offsetBy: from)..<s.index(s.startIndex, offsetBy: to)]
        }
        return "\(part(0, 8))-\(part(8, 12))-\(part(12, 16))-\(part(16, 20))-\(part(20, 32))"
    }
}
