import Prometheus

/// The broadcast channels the server knows (DESIGN.md section 4, "Channels"): from the channel
/// management results (`channel.created`, `channel.deleted`) and the broadcasts themselves.
///
/// A channel's history only grows (created once, deleted once, APNs never reuses an id), so the
/// book as it is now judges any earlier broadcast as the writer judged it when it was stored:
/// by what was stored before it (`seq`) and in effect at its time. The writer and every replay
/// judge through `judge`.
struct ChannelBook: Sendable, Equatable {
    struct Channel: Sendable, Equatable {
        /// `message-storage-policy` of the create (0: no message kept), when it was reported.
        var storagePolicy: Int?
        var created: Stamp?
        var deleted: Stamp?
        /// The newest broadcast to it (by time, then arrival).
        var lastBroadcast: Broadcast?

        /// Created and not deleted: what `liveactivity_channels` counts.
        var isLive: Bool { created != nil && deleted == nil }
    }

    /// When a channel request took effect, and the event that reported it.
    struct Stamp: Sendable, Equatable {
        var at: Double
        var seq: Int64
    }

    /// A broadcast as the channel list shows it: when, what, and APNs' answer.
    struct Broadcast: Sendable, Equatable {
        var seq: Int64
        var at: Double
        var push: PushResult
        var effect: EventEffect.Result
        var why: EventEffect.Why?
    }

    /// What a broadcast meets: whether its channel was deleted before it, and whether the
    /// channel keeps no message (then `apns-expiration` must be 0).
    struct Judgement: Equatable {
        var deleted = false
        var keepsNoMessage = false
    }

    /// APNs' limit per app and environment (DESIGN.md section 2).
    static let limit = 10_000

    /// By the ids' bytes, as the table keys them: canonically equivalent ids are two channels.
    private(set) var channels: [ExactString: Channel] = [:]
    /// Channels changed since `takeChanged` (their rows are written with the commit).
    private var changed = Set<ExactString>()
    /// Live channels by storage policy (`liveactivity_channels`): "0", "1", or "unknown" when the
    /// create did not say. Kept as requests change them: the book keeps deleted channels too, and
    /// a scrape must not walk them all.
    private(set) var liveByPolicy = ["0": 0, "1": 0]

    init(_ channels: [ExactString: Channel] = [:]) {
        self.channels = channels
        for c in channels.values { count(c, by: 1) }
    }

    private static func policyLabel(_ c: Channel) -> String { c.storagePolicy.map(String.init) ?? "unknown" }

    private mutating func count(_ c: Channel, by n: Int) {
        guard c.isLive else { return }
        let label = Self.policyLabel(c)
        liveByPolicy[label, default: 0] += n
        // "unknown" is a series only while some live channel has it, as a recount would say.
        if label == "unknown", liveByPolicy[label] == 0 { liveByPolicy[label] = nil }
    }

    subscript(id: String) -> Channel? { channels[ExactString(id)] }

    /// How a broadcast stored as `seq`, taking effect at `t`, finds `channel`.
    func judge(broadcastTo channel: String, seq: Int64, at t: Double) -> Judgement {
        guard let c = self[channel] else { return Judgement() }
        var j = Judgement()
        if let deleted = c.deleted, deleted.seq < seq, deleted.at <= t { j.deleted = true }
        if let created = c.created, created.seq < seq, c.storagePolicy == 0 { j.keepsNoMessage = true }
        return j
    }

    /// A channel request APNs carried out (2xx), stored as `seq` at `t`. A second create or
    /// delete of the same channel changes nothing (the first stands).
    mutating func record(_ request: ChannelRequest, channel: String, seq: Int64, at t: Double) {
        guard request.succeeded else { return }
        let channel = ExactString(channel)
        let before = channels[channel] ?? Channel()
        var c = before
        switch request.operation {
        case .create:
            guard c.created == nil else { return }
            c.created = Stamp(at: t, seq: seq)
            c.storagePolicy = request.storagePolicy
        case .delete:
            guard c.deleted == nil else { return }
            c.deleted = Stamp(at: t, seq: seq)
        }
        count(before, by: -1)
        count(c, by: 1)
        channels[channel] = c
        changed.insert(channel)
    }

    /// A broadcast to `channel`, with its own effect: kept if it is the newest.
    mutating func noteBroadcast(to channel: String, _ broadcast: Broadcast) {
        let channel = ExactString(channel)
        var c = channels[channel] ?? Channel()
        if let last = c.lastBroadcast, (last.at, last.seq) > (broadcast.at, broadcast.seq) { return }
        c.lastBroadcast = broadcast
        channels[channel] = c
        changed.insert(channel)
    }

    /// The channels changed since the last call, for their rows; forgets them.
    mutating func takeChanged() -> [(id: String, channel: Channel)] {
        defer { changed = [] }
        return changed.sorted().compactMap { id in channels[id].map { (id.text, $0) } }
    }
}
