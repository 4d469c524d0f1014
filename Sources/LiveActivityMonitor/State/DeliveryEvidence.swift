import JSON

/// What an activity's observations (`activity.observed`) can be compared with (DESIGN.md
/// section 4, "Delivery evidence"): the contents the server knows were on its lock screen, each
/// with its timestamp, and for those an applied 200 push brought, the push awaiting a verdict;
/// and what the verdicts came to (the read API's `delivery`).
///
/// Small: a content is kept as its digest (an observation equal to it carries the text), and
/// only the latest `maxKnown` (an activity pushed every few seconds for 8 hours keeps its
/// latest contents; a push that leaves the list before any observation gets no verdict).
public struct DeliveryEvidence: Sendable, Equatable {
    /// 32 bytes: the push is kept as its two fields, `Int64.min` for none (a tuple optional took
    /// 40 with its padding; eight of these a record).
    public struct Known: Sendable, Equatable {
        /// `ContentDigest` of `content`.
        var digest: UInt64
        var timestamp: Double
        private var pushSeq: Int64
        private var pushSentAt: Double

        init(digest: UInt64, timestamp: Double, push: (seq: Int64, sentAt: Double)?) {
            self.digest = digest
            self.timestamp = timestamp
            pushSeq = push?.seq ?? .min
            pushSentAt = push?.sentAt ?? 0
        }

        /// The applied 200 push that brought it, while it awaits a verdict: its event's `seq`
        /// and when it was sent (an event's `seq` is positive, never `Int64.min`).
        var push: (seq: Int64, sentAt: Double)? {
            get { pushSeq == .min ? nil : (pushSeq, pushSentAt) }
            set { pushSeq = newValue?.seq ?? .min; pushSentAt = newValue?.sentAt ?? 0 }
        }

        public static func == (a: Known, b: Known) -> Bool {
            a.digest == b.digest && a.timestamp == b.timestamp && a.push?.seq == b.push?.seq && a.push?.sentAt == b.push?.sentAt
        }
    }

    /// Oldest first, as they were applied. While `knownInRow`, only those applied since the
    /// row was last written (a tail): the rest are the row's.
    public internal(set) var known: [Known] = []
    /// When an observation last confirmed a push.
    @OptionalTime public internal(set) var lastConfirmedAt: Double? = nil
    /// Pushes an observation showed the phone did not display.
    public internal(set) var missed: Int {
        get { Int(missedCount) }
        set { missedCount = Int32(clamping: newValue) }
    }
    /// 4 bytes, so that `knownInRow` fits beside it in the 8 `missed` took (the record's stride
    /// stays 264); a push is missed at most once, and an activity lives 8 hours.
    private var missedCount: Int32 = 0
    /// The `activities` row holds the known contents applied before `known` (SQLite store: a
    /// live record lets them go after the commit that writes its row, `leaveKnownToRow`).
    public private(set) var knownInRow = false

    static let maxKnown = 8

    public init() {}

    /// Nothing to store: the row's column is null.
    var isEmpty: Bool { known.isEmpty && !knownInRow && lastConfirmedAt == nil && missed == 0 }

    /// Lets the known contents go to the row just written (it holds them, or the newest
    /// `maxKnown` of its own and these); the array's block is freed.
    mutating func leaveKnownToRow() {
        guard !isEmpty, !(knownInRow && known.isEmpty) else { return }
        known = []
        knownInRow = true
    }

    /// Takes back the row's known contents (`row`, read from it), the tail held here after
    /// them: the list it would hold had it kept them all.
    mutating func takeBack(row: [Known]) {
        guard knownInRow else { return }
        let all = (row + known).suffix(Self.maxKnown)
        known = []
        known.reserveCapacity(all.count)
        known.append(contentsOf: all)
        knownInRow = false
    }

    /// The header read from a row whose known contents stay there (start-up, the writer's loader).
    init(confirmedAt: Double?, missed: Int, knownInRow: Bool) {
        lastConfirmedAt = confirmedAt
        self.missed = missed
        self.knownInRow = knownInRow
    }

    /// Keeps a content now on the lock screen (from the app, or from `push`), by its digest
    /// (`ContentReading.digest`; nil: it did not parse).
    mutating func remember(digest: UInt64?, timestamp: Double, push: (seq: Int64, sentAt: Double)?) {
        guard let digest else { return }
        // Room made before the append: an append past `maxKnown` doubled the buffer to 16
        // entries for good (and the removal never shrinks it).
        if known.count >= Self.maxKnown { known.removeFirst(known.count - Self.maxKnown + 1) }
        known.append(Known(digest: digest, timestamp: timestamp, push: push))
    }

    /// The known content an observation shows (by its digest): the newest of those equal to it.
    func match(digest: UInt64?) -> Int? {
        guard let digest else { return nil }
        var best: Int?
        for i in known.indices where known[i].digest == digest {
            if best.map({ known[i].timestamp >= known[$0].timestamp }) ?? true { best = i }
        }
        return best
    }
}
