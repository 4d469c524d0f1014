import Testing
@testable import LiveActivityMonitor

/// `CompactID` against the text it keeps: the form chosen, the text read back byte for byte, and
/// equality, hashing and both orders as the Strings' own.
@Suite struct CompactIDTests {
    static let ids = [
        "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
        "e621e1f8-c36c-495a-93fc-0c247a3e6e60", "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        "12345678-1234-1234-1234-123456789012",
        // Mixed case, one character short or long, a dash moved, a letter past f, not ASCII.
        "e621E1f8-c36c-495a-93fc-0c247a3e6e5f", "e621e1f8-c36c-495a-93fc-0c247a3e6e5", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f0",
        "e621e1f-8c36c-495a-93fc-0c247a3e6e5f", "g621e1f8-c36c-495a-93fc-0c247a3e6e5f", "é621e1f8-c36c-495a-93fc-0c247a3e6e5",
        "e621e1f8-c36c-495a-93fc-0c247a3e6e5", "e621e1f8c36c495a93fc0c247a3e6e5f", "ride-42", "", "a", "BK-1", "Ride-é",
        "e621e1f8-c36c-495a-93fc-0c247a3e6e5f ", "e621e1f8-c36c-495a-93fc-0c247a3e6e5F",
    ]

    @Test(arguments: ids)
    func readsBackAsItCame(_ text: String) {
        let id = CompactID(text)
        #expect(id.string == text)
        #expect(id.withUTF8 { Array($0) } == Array(text.utf8))
        var copy = text
        #expect(copy.withUTF8 { CompactID(utf8: UnsafeRawBufferPointer($0)) } == id, "the same from bytes")
    }

    @Test func uuidsInOneCaseAreKeptAsBytes() {
        #expect(CompactID("e621e1f8-c36c-495a-93fc-0c247a3e6e5f") == .lowerUUID(0xe621e1f8c36c495a, 0x93fc0c247a3e6e5f))
        #expect(CompactID("E621E1F8-C36C-495A-93FC-0C247A3E6E5F") == .upperUUID(0xe621e1f8c36c495a, 0x93fc0c247a3e6e5f))
        // Digits alone: one text, one form.
        #expect(CompactID("12345678-1234-1234-1234-123456789012") == .lowerUUID(0x1234567812341234, 0x1234123456789012))
        for text in ["e621E1f8-c36c-495a-93fc-0c247a3e6e5f", "e621e1f8-c36c-495a-93fc-0c247a3e6e5", "ride-42"] {
            #expect(CompactID(text) == .text(text))
        }
    }

    /// Equal when the texts are, with the same hash; ordered by `<` as the texts are, and by
    /// bytes as their UTF-8 is.
    @Test func comparesAsItsText() {
        for a in Self.ids {
            for b in Self.ids {
                let (x, y) = (CompactID(a), CompactID(b))
                #expect((x == y) == (a == b), "\(a) == \(b)")
                if a == b { #expect(x.hashValue == y.hashValue) }
                #expect((x < y) == (a < b), "\(a) < \(b)")
                let bytes = Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) ? -1 : (a.utf8.elementsEqual(b.utf8) ? 0 : 1)
                #expect(CompactID.byteOrder(x, y) == bytes, "\(a) by bytes \(b)")
            }
        }
    }

    /// The search's key of an id is the key of its text.
    @Test(arguments: ids)
    func searchKeyIsTheTextsKey(_ text: String) {
        #expect(IDSearchIndex.key(CompactID(text)) == CompactID(IDSearchIndex.key(text)))
    }
}
