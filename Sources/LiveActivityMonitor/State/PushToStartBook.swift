import Prometheus

/// The push-to-start state that lives outside any activity (DESIGN.md section 4, "Push-to-start
/// outcome"): each device's current push-to-start token per attributes type, the tokens newer
/// ones superseded, and the 200 start pushes still waiting for their activity. The writer owns
/// one (kept in the tables `push_to_start_tokens`, `superseded_push_to_start_tokens`,
/// `pending_start_pushes`); each replay builds its own from the booking's events.
struct PushToStartBook: Sendable {
    struct Pending: Sendable, Equatable {
        var seq: Int64
        var bookingID: String
        /// The type the push names; nil matches any.
        var attributesType: String?
        var sentAt: Double
        var deadline: Double
    }

    struct DeviceType: Hashable, Sendable {
        var deviceID: ExactString
        var attributesType: ExactString
    }

    /// A device's current token: its fingerprint as 8 bytes (`TokenFingerprint.Stored`), not a
    /// 16-character String with a heap block of its own (one per device of the fleet).
    struct Token: Sendable, Equatable {
        let stored: TokenFingerprint.Stored
        var at: Double

        init(fingerprint: String, at: Double) {
            stored = TokenFingerprint.Stored(fingerprint)
            self.at = at
        }

        var fingerprint: String { stored.text }

        func isFingerprint(_ other: String) -> Bool { stored == TokenFingerprint.Stored(other) }
    }

    /// What a commit changed, for the tables.
    struct Changes: Sendable {
        var added: [Pending] = []
        var resolved: [Int64] = []
        var tokens: [DeviceType: Token] = [:]
        var superseded: Set<String> = []
        var current: Set<String> = []
        var verdicts: [Int64] = []
        var unstarted: [Pending] = []
        var isEmpty: Bool {
            added.isEmpty && resolved.isEmpty && tokens.isEmpty && superseded.isEmpty && current.isEmpty && verdicts.isEmpty
                && unstarted.isEmpty
        }
    }

    /// By booking, in the order sent.
    private(set) var pending: [ExactString: [Pending]] = [:]
    /// (deadline, booking): when a booking's oldest pending push runs out.
    private var deadlines = DeadlineQueue<String>()
    private(set) var tokens: [DeviceType: Token] = [:]
    /// Every token a newer one replaced, for good (a start push APNs accepted for one starts
    /// nothing): 8 bytes each as `Stored`, where a String took a 48-byte block.
    private var superseded: Set<TokenFingerprint.Stored> = []
    /// Current tokens per raw attributes type (the `push_to_start_tokens` gauge).
    private(set) var tokenCounts: [ExactString: Int] = [:]
    /// Start pushes judged `superseded_token` when they were stored (a replay reads these: the
    /// device events that decided them belong to no booking).
    var judgedSuperseded: Set<Int64> = []
    /// The start pushes judged `not_started` whose window ended in the last `unstartedKept`
    /// seconds, oldest first, at most `unstartedLimit` (on-call's triage lists them).
    private(set) var unstarted: [Pending] = []
    static let unstartedKept = 86_400.0
    static let unstartedLimit = 1000
    /// Kept for the tables only by the writer's book.
    var recordsChanges = false
    private(set) var changes = Changes()

    init() {}

    var earliestDeadline: Double? { deadlines.earliest }

    mutating func takeChanges() -> Changes {
        defer { changes = Changes() }
        return changes
    }

    // MARK: Start pushes

    mutating func add(_ p: Pending) {
        pending[ExactString(p.bookingID), default: []].append(p)
        deadlines.push(p.deadline, p.bookingID)
        if recordsChanges { changes.added.append(p) }
    }

    /// Takes the pending pushes of `bookingID` for `type` (a push that named no type matches any)
    /// whose window `startedAt` falls in.
    mutating func take(bookingID: String, type: String, startedAt: Double) -> [Pending] {
        let key = ExactString(bookingID)
        guard let list = pending[key] else { return [] }
        let (taken, kept) = list.reduce(into: ([Pending](), [Pending]())) { out, p in
            let sameType = p.attributesType.map { ExactText.equal($0, type) } ?? true
            if sameType, startedAt <= p.deadline { out.0.append(p) } else { out.1.append(p) }
        }
        pending[key] = kept.isEmpty ? nil : kept
        if recordsChanges { changes.resolved += taken.map(\.seq) }
        return taken
    }

    /// Takes every pending push whose window has passed at `now`, oldest deadline first.
    mutating func takeExpired(at now: Double) -> [Pending] {
        var out: [Pending] = []
        for booking in deadlines.popDue(now) {
            let key = ExactString(booking)
            guard let list = pending[key] else { continue }
            let expired = list.filter { $0.deadline <= now }
            let kept = list.filter { $0.deadline > now }
            pending[key] = kept.isEmpty ? nil : kept
            out += expired
        }
        out.sort { ($0.deadline, $0.seq) < ($1.deadline, $1.seq) }
        if recordsChanges {
            changes.resolved += out.map(\.seq)
            changes.unstarted += out
        }
        keepUnstarted(out, at: now)
        return out
    }

    private mutating func keepUnstarted(_ expired: [Pending], at now: Double) {
        unstarted += expired
        let from = unstarted.firstIndex { $0.deadline > now - Self.unstartedKept } ?? unstarted.endIndex
        unstarted.removeFirst(max(from, unstarted.count - Self.unstartedLimit))
    }

    // MARK: Tokens

    func isSuperseded(_ fingerprint: String) -> Bool { superseded.contains(TokenFingerprint.Stored(fingerprint)) }

    /// Records `seq` as a start push judged `superseded_token`.
    mutating func judge(_ seq: Int64) {
        judgedSuperseded.insert(seq)
        if recordsChanges { changes.verdicts.append(seq) }
    }

    mutating func setToken(_ token: Token, for key: DeviceType) {
        var key = key
        // The fleet's few types, one copy each: the count's key, when the type has one.
        if let known = tokenCounts.index(forKey: key.attributesType) { key.attributesType = tokenCounts[known].key }
        if tokens.updateValue(token, forKey: key) == nil { tokenCounts[key.attributesType, default: 0] += 1 }
        superseded.remove(token.stored)
        if recordsChanges {
            changes.tokens[key] = token
            changes.current.insert(token.fingerprint)
            changes.superseded.remove(token.fingerprint)
        }
    }

    mutating func supersede(_ fingerprint: String) {
        superseded.insert(TokenFingerprint.Stored(fingerprint))
        if recordsChanges {
            changes.superseded.insert(fingerprint)
            changes.current.remove(fingerprint)
        }
    }

    // MARK: Loading

    /// Rebuilds the writer's book from its tables.
    init(pending: [Pending], tokens: [DeviceType: Token], superseded: Set<String>, unstarted: [Pending] = []) {
        for p in pending { add(p) }
        self.unstarted = Array(unstarted.suffix(Self.unstartedLimit))
        for (key, token) in tokens { setToken(token, for: key) }
        self.superseded = Set(superseded.lazy.map(TokenFingerprint.Stored.init))
        recordsChanges = true
    }
}
