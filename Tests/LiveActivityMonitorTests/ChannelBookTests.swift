import Testing
@testable import LiveActivityMonitor

/// The channel book's live counts (`liveByPolicy`, the gauge `liveactivity_channels`) are kept
/// as requests change them: after every request of a random stream they equal a recount of the
/// channels, and the counts a book loaded from those channels makes.
@Suite struct ChannelBookTests {
    static func recount(_ book: ChannelBook) -> [String: Int] {
        var counts = ["0": 0, "1": 0]
        for c in book.channels.values where c.created != nil && c.deleted == nil {
            counts[c.storagePolicy.map(String.init) ?? "unknown", default: 0] += 1
        }
        return counts
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func keptLiveCountsEqualARecount(seed: UInt64) {
        var random = PushEventScannerTests.Seeded(state: seed)
        var book = ChannelBook()
        var mostLive = 0
        for seq in 1...3000 {
            let operation: ChannelRequest.Operation = Bool.random(using: &random) ? .create : .delete
            let request = ChannelRequest(operation: operation, status: [201, 204, 400, 0].randomElement(using: &random)!,
                                         reason: nil, latencyMs: nil,
                                         storagePolicy: [nil, 0, 1].randomElement(using: &random)!)
            book.record(request, channel: "ch\(Int.random(in: 0..<200, using: &random))", seq: Int64(seq), at: Double(seq))
            #expect(book.liveByPolicy == Self.recount(book), "after request \(seq)")
            mostLive = max(mostLive, book.liveByPolicy.values.reduce(0, +))
        }
        #expect(ChannelBook(book.channels).liveByPolicy == book.liveByPolicy)
        #expect(mostLive > 10, "channels were live on the way: \(mostLive)")
    }
}
