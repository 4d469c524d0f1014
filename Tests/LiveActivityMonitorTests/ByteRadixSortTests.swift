import Testing
@testable import LiveActivityMonitor

/// `ByteRadixSort` gives the order a comparison sort gives, whatever the keys: few distinct
/// bytes, long shared prefixes, keys equal in every byte (left to `less`), ranges around the
/// length it sorts by comparisons, and elements holding reference-counted values.
@Suite struct ByteRadixSortTests {
    /// A 3-byte key, then a tie-break the key does not hold (a string, so that moves of
    /// reference-counted values are checked as well).
    struct Element: ByteKeyed, Equatable {
        var key: [UInt8]
        var name: String

        static var keyLength: Int { 3 }
        func keyByte(_ i: Int) -> UInt8 { key[i] }

        static func less(_ a: Element, _ b: Element) -> Bool {
            a.key != b.key ? a.key.lexicographicallyPrecedes(b.key) : a.name < b.name
        }
    }

    static func sorted(_ elements: [Element]) -> [Element] {
        var out = elements
        out.withUnsafeMutableBufferPointer { ByteRadixSort.sort($0, by: Element.less) }
        return out
    }

    @Test(arguments: [0, 1, 2, ByteRadixSort.shortRange, ByteRadixSort.shortRange + 1, 500, 5000])
    func sortsAsComparisonsDo(count: Int) {
        var random = PushEventScannerTests.Seeded(state: UInt64(count) + 11)
        // Per case, how many values each key byte takes: 1 (a byte all share), a few, all 256.
        for spread in [[1, 1, 1], [1, 3, 256], [2, 1, 2], [256, 256, 256], [4, 1, 1]] {
            let elements = (0..<count).map { i in
                Element(key: spread.map { UInt8(Int.random(in: 0..<$0, using: &random) * (256 / $0)) },
                        name: "n\(Int.random(in: 0..<count + 1, using: &random))-\(i)")
            }
            let expected = elements.sorted(by: Element.less)
            let sorted = Self.sorted(elements)
            let wrong = expected.indices.first { sorted[$0] != expected[$0] }
            #expect(wrong == nil, "\(count) elements, spread \(spread): the first misplaced at \(wrong ?? -1)")
        }
    }

    @Test func keysEqualInEveryByteAreLeftToLess() {
        let elements = (0..<300).map { Element(key: [7, 7, 7], name: "same-\(($0 * 7919) % 300)") }
        #expect(Self.sorted(elements) == elements.sorted(by: Element.less))
    }
}
