import LiveActivityWire
import Prometheus

/// What one commit changes in memory: the records its events and due deadlines touched, and the
/// counters and labels after them. The writer builds one per commit and publishes it after
/// COMMIT; start-up builds one per commit it replays (`EventStore+Replay.swift`), so that a
/// replayed commit changes the state exactly as the commit did.
struct CommitChanges {
    var counters: MonitorCounters
    private(set) var labels: AttributesTypeLabels
    /// The content shapes after this commit's events (its app starts teach them).
    private(set) var shapes: ContentShapes
    /// The verdicts of this commit's events whose content would not decode, by `seq`: stored
    /// with them (`event_verdicts`), for replays to honour.
    private(set) var verdicts: [(seq: Int64, detail: String)] = []
    /// The activities this commit has read or changed, each in one slot (`Slot`), in the order
    /// first met: an event's id is hashed once for its original, its working record and whether
    /// it changed, where three dictionaries each hashed it (PERFORMANCE.md, session 36).
    private var slots: [Slot] = []
    /// Where `slots` holds each activity. A slot never moves, so a new one costs one hash
    /// (`slot`), where a dictionary of slots cost three (PERFORMANCE.md, session 40). By bytes,
    /// as every id in memory (`CompactID`): canonically equivalent ids are two activities.
    private var slotIndex: [ExactString: Int] = [:]
    /// The slot the last lookup found: the commit looks an event's activity up for its booking,
    /// its booking's place and its rules in turn.
    private var lastSlot: (id: String, index: Int)?
    /// The records the commit changed, by an event or by time (set by `finish`).
    private(set) var changedIDs = Set<ExactString>()
    /// Of those, the ones new to the store or whose dismissal changed (set by `finish`).
    private var wholeRowIDs = Set<ExactString>()
    /// Whether one of those leaves memory at the commit's time (set by `finish`).
    private var leavesMemory = false
    /// The commit's events by type, in a short list: a commit has few types, and a dictionary
    /// hashed each event's type by its name.
    private var acceptedByType: [(type: EventType, count: Double)] = []
    private var pushes = PushTally()
    private var effects = EffectTally()
    private let engine: StateEngine
    /// The push-to-start book, taken from memory for the commit and given back by `publish`.
    private(set) var starts: PushToStartBook
    /// What the commit changed in the book (set by `finish`), for its tables.
    private(set) var startChanges = PushToStartBook.Changes()
    private var startsExpiredAt: Double?
    /// A record the store knows but this commit has not read yet: memory, then the database.
    private let load: (String) throws -> ActivityRecord?
    /// The texts of a record that left them to its row (`textsInRow`), for an event the engine
    /// reads them for (`StateEngine.readsTexts`); nil from a store whose records keep them.
    private let texts: (String) throws -> StoredTexts?
    /// The known contents a record's row holds (`DeliveryEvidence.knownInRow`), for an event the
    /// engine reads them for (`StateEngine.readsKnown`); empty from a store whose records keep them.
    private let known: (String) throws -> [DeliveryEvidence.Known]
    /// The activities in memory subscribed to a channel (this commit's own are in `working`).
    private let subscribers: (String) -> [(id: String, record: ActivityRecord)]
    /// This commit's broadcasts, filed under each activity that received one (`broadcast_receivers`).
    private(set) var receivers: [(activityID: String, seq: Int64)] = []
    /// What this commit's broadcasts' subscribers could not decode, once per broadcast and
    /// attributes type (`broadcast_verdicts`): the broadcast's own effect is the channel's, so
    /// `verdicts` has none of it, and replays honour these instead.
    private(set) var broadcastVerdicts: [(seq: Int64, attributesType: String, detail: String)] = []
    /// The channel book, taken from memory for the commit and given back by `publish`.
    private(set) var channels: ChannelBook
    /// This commit's events that name a channel, filed under it (`channel_events`).
    private var channelEvents: [(channelID: String, seq: Int64)] = []

    init(counters: MonitorCounters, labels: AttributesTypeLabels, shapes: ContentShapes, starts: PushToStartBook,
         channels: ChannelBook, settings: EngineSettings, load: @escaping (String) throws -> ActivityRecord?,
         subscribers: @escaping (String) -> [(id: String, record: ActivityRecord)] = { _ in [] },
         texts: @escaping (String) throws -> StoredTexts? = { _ in nil },
         known: @escaping (String) throws -> [DeliveryEvidence.Known] = { _ in [] }) {
        self.subscribers = subscribers
        self.texts = texts
        self.known = known
        self.channels = channels
        self.counters = counters
        self.labels = labels
        self.shapes = shapes
        self.starts = starts
        self.engine = StateEngine(settings: settings)
        self.load = load
    }

    /// The booking of an activity as this commit knows it, read in place (`record` returns a
    /// copy of the whole record).
    mutating func bookingID(of id: String) throws -> String? {
        try withSlot(slot(id)) { $0.record { $0?.bookingID } }
    }

    /// Whether a lookup by booking finds `event` through its activity's row (`booking_in_row`).
    enum BookingInRow {
        case no
        case yes
        /// The activity is not known yet and `event` may start it: yes once it has, under that
        /// booking (the writer checks after applying it).
        case ifStarted
    }

    /// Whether `event` names the booking its activity's live record holds, so that a lookup by
    /// booking finds it through that record's row, as it finds the activity's other events: its
    /// `events.booking_in_row` is set and `events_by_booking` leaves it out. Only while the record
    /// is not dismissed: its row can then not be deleted before the event is filed under it (the
    /// commit that dismisses it files every event before it).
    mutating func bookingInRow(_ event: Event) throws -> BookingInRow {
        guard let booking = event.bookingID, let id = event.activityID else { return .no }
        let held = try withSlot(slot(id)) { $0.record { r in r.map { (booking: $0.bookingID, live: $0.dismissedAt == nil) } } }
        guard let held else { return StateEngine.mayStart(event) ? .ifStarted : .no }
        return held.live && ExactText.equal(held.booking, booking) ? .yes : .no
    }

    /// The activity as this commit knows it so far, or nil if never started.
    mutating func record(_ id: String) throws -> ActivityRecord? {
        try withSlot(slot(id)) { $0.record { $0 } }
    }

    /// The record as the commit left it (after `finish`: for its row), nil if it holds none.
    func working(_ id: ExactString) -> ActivityRecord? { slotIndex[id].flatMap { slots[$0].working } }

    /// Makes room in the index for `activities` more slots at once, so that it never grows by
    /// hashing every id again (the slots themselves grow as they come: a large request may name
    /// few activities).
    mutating func reserveSlots(_ activities: Int) {
        slotIndex.reserveCapacity(slotIndex.count + activities)
    }

    /// One activity as this commit knows it.
    private struct Slot {
        let id: String
        /// As the store knew it before this commit (nil: never started), when `read`.
        var original: ActivityRecord?
        /// Read from the store (memory, else its row); if not, a subscriber a broadcast took
        /// straight from memory, whose `original` is not kept: only its dismissal before it.
        var read: Bool
        var receivedDismissal: Double?
        /// As the commit has changed it so far (nil: taken from `original` by nothing yet).
        var working: ActivityRecord?
        /// Changed by an event: its row is written without comparing it with `original` (the
        /// comparison walks attributes and content, a measurable share of the writer's time).
        var changedByEvent = false

        static func read(_ id: String, _ original: ActivityRecord?) -> Slot { Slot(id: id, original: original, read: true) }

        /// `body` on the record as the commit knows it, in place (an optional's or a dictionary
        /// value's getter copies the whole record).
        mutating func record<T>(_ body: (inout ActivityRecord?) -> T) -> T {
            if case .some = working { return body(&working) }
            return body(&original)
        }

        /// The record out of the slot, for an event or a broadcast to change: the working one,
        /// else a copy of the original.
        mutating func take() -> ActivityRecord? { working.take() ?? original }

        /// After time has passed for `working` at the commit's time `now`: whether its row
        /// changes, whether whole (new to the store, or its dismissal changed: its index
        /// entries change), and whether it leaves memory.
        mutating func settled(at now: Double) -> (changed: Bool, wholeRow: Bool, leaves: Bool) {
            let dismissedAt = working!.dismissedAt
            guard changedByEvent || !read || original != working else { return (false, false, false) }
            let known = read ? original.isPresent : true
            let dismissedBefore = read ? original?.dismissedAt : receivedDismissal
            return (true, !known || dismissedBefore != dismissedAt, working!.state(at: now) == .dismissed)
        }
    }

    /// Where `slots` holds `id`, its original read from the store the first time.
    private mutating func slot(_ id: String) throws -> Int {
        if let last = lastSlot, ExactText.equal(last.id, id) { return last.index }
        // Looked up and, when new, claimed in one hash: the next place is written in as it is found.
        let next = slots.count
        let i = Self.claim(&slotIndex[ExactString(id), default: next])
        if i == next {
            do { slots.append(.read(id, try load(id))) } catch {
                slotIndex[ExactString(id)] = nil
                throw error
            }
        }
        lastSlot = (id, i)
        return i
    }

    /// The place a dictionary's defaulting accessor yields: it inserts the default for a new key,
    /// so that the lookup and the insertion hash the key once.
    private static func claim(_ place: inout Int) -> Int { place }

    /// Adds `slot`, whose activity is not in `slots` yet.
    private mutating func add(_ slot: consuming Slot) {
        slotIndex[ExactString(slot.id)] = slots.count
        slots.append(slot)
    }

    /// `body` on the slot at `i`, in place (an array's getter copies it).
    private mutating func withSlot<T>(_ i: Int, _ body: (inout Slot) throws -> T) rethrows -> T {
        try body(&slots[i])
    }

    /// Applies an event just stored by the commit at `receivedAt` as `seq` (or replayed at
    /// start-up, with its stored verdict).
    mutating func apply(_ event: Event, seq: Int64, receivedAt: Double) throws {
        // Taken out of `working` while it changes, so that its arrays are not shared and change
        // in place (a copy per event was a measurable share of the writer).
        let slot = try event.activityID.map { try self.slot($0) }
        var current = slot.flatMap { withSlot($0) { $0.take() } }
        // The rare event whose rule reads a text the record left to its row: read back first.
        if current?.textsInRow.isEmpty == false, StateEngine.readsTexts(event), let id = current?.activityID,
           let stored = try texts(id) {
            current!.fillTexts(attributes: stored.attributes, contentState: stored.contentState)
        }
        // An observation settles the known contents: the row's, then the tail memory holds.
        if current?.delivery.knownInRow == true, StateEngine.readsKnown(event), let id = current?.activityID {
            current!.delivery.takeBack(row: try known(id))
        }
        if let i = acceptedByType.firstIndex(where: { $0.type == event.type }) {
            acceptedByType[i].count += 1
        } else {
            acceptedByType.append((event.type, 1))
        }
        // Start windows run out at the commit's time before its first event (and in `finish`).
        if startsExpiredAt != receivedAt {
            startsExpiredAt = receivedAt
            _ = engine.expireStarts(&starts, at: receivedAt, counters: &counters)
        }
        let effect = engine.apply(event, seq: seq, receivedAt: receivedAt, to: &current, counters: &counters,
                                  pushes: &pushes, labels: &labels, shapes: &shapes, starts: &starts,
                                  channels: &channels).effect
        effects.count(effect, of: event.type)
        if event.activityID == nil, let channel = event.channelID { channelEvents.append((channel, seq)) }
        // A replayed event brings its stored verdict: stored once.
        if effect.why == .undecodableContent, let detail = effect.detail, event.contentVerdict == nil {
            verdicts.append((seq, detail))
        }
        if let slot, current.isPresent {
            withSlot(slot) { s in
                s.working = current.take()
                s.changedByEvent = true
            }
        }
        if event.isBroadcast, effect.why == nil, let channel = event.channelID {
            try deliver(event, to: channel, seq: seq, receivedAt: receivedAt)
        }
    }

    /// A 200 broadcast, taken by every activity subscribed to its channel: one event, one
    /// commit, N records (DESIGN.md section 4, "Channels"). Each is filed under the broadcast
    /// so that its history finds it.
    private mutating func deliver(_ event: Event, to channel: String, seq: Int64, receivedAt: Double) throws {
        var (received, content) = StateEngine.receivable(event, receivedAt: receivedAt)
        var fromMemory = subscribers(channel)
        // Room for every subscriber at once: growing by doubling moved 800-byte slots again and again.
        slots.reserveCapacity(slots.count + fromMemory.count)
        reserveSlots(fromMemory.count)
        // The subscribers this commit has read already take it as this commit knows them...
        var known = Set<ExactString>()
        for (id, _) in fromMemory {
            let key = ExactString(id)
            if slotIndex[key] != nil { known.insert(key) }
        }
        for i in slots.indices {
            if let id = withSlot(i, { s in ExactText.equal(s.working?.channelID, channel) ? s.id : nil }) {
                known.insert(ExactString(id))
            }
        }
        for id in known.sorted() {
            let i = try slot(id.text)
            guard var r = withSlot(i, { $0.take() }) else { continue }
            defer { withSlot(i) { $0.working = r } }
            guard ExactText.equal(r.channelID, channel) else { continue }
            let taken = engine.receive(received, seq: seq, on: &r, counters: &counters, labels: labels, shapes: shapes,
                                       content: &content)
            noteVerdict(taken.effect, of: received, seq: seq, type: r.attributesType)
            withSlot(i) { $0.changedByEvent = true }
            receivers.append((id.text, seq))
        }
        // ...and the others as memory holds them, taken at once (a lookup and a copy each, under
        // the state's lock, had been a third of a broadcast's cost) and moved out from the end
        // (receivers are filed in descending id order). Of those originals, `finish` needs only
        // their dismissal.
        while let (id, record) = fromMemory.popLast() {
            guard !known.contains(ExactString(id)) else { continue }
            var r = consume record
            let dismissedAt = r.dismissedAt
            let taken = engine.receive(received, seq: seq, on: &r, counters: &counters, labels: labels, shapes: shapes,
                                       content: &content)
            noteVerdict(taken.effect, of: received, seq: seq, type: r.attributesType)
            add(Slot(id: id, original: nil, read: false, receivedDismissal: dismissedAt, working: consume r))
            receivers.append((id, seq))
        }
    }

    /// Keeps a subscriber's verdict on broadcast `seq` for its attributes type, once per type
    /// (every subscriber of a type is given the same: `PushContent`), unless the broadcast was
    /// replayed with it stored.
    private mutating func noteVerdict(_ effect: EventEffect, of broadcast: borrowing Event, seq: Int64, type: String) {
        guard effect.why == .undecodableContent, let detail = effect.detail,
              !broadcast.broadcastVerdicts.contains(where: { ExactText.equal($0.attributesType, type) }),
              !broadcastVerdicts.contains(where: { $0.seq == seq && ExactText.equal($0.attributesType, type) })
        else { return }
        broadcastVerdicts.append((seq, type, detail))
    }

    /// The side rows this commit must write with its events, and forgets them.
    mutating func takeWrites() -> CommitWrites {
        defer { verdicts = []; receivers = []; broadcastVerdicts = []; channelEvents = [] }
        return CommitWrites(verdicts: verdicts, shapes: shapes.takeChanged(), receivers: receivers,
                            broadcastVerdicts: broadcastVerdicts, channels: channels.takeChanged(),
                            channelEvents: channelEvents)
    }

    /// Counts an event not stored because its id already was: its effect is `duplicate`.
    mutating func duplicate(_ event: Event) {
        effects.count(.noEffect(.duplicate), of: event.type)
    }

    /// Ends the commit at `now`: counts its events, brings in the records whose deadline is
    /// `due`, and lets time pass for every record it holds.
    mutating func finish(at now: Double, due: [String]) throws {
        // Counted once per type and commit: a series key per event cost more than the count.
        for (type, count) in acceptedByType { counters.inc(MonitorMetrics.ingestEvents, type.rawValue, by: count) }
        acceptedByType = []
        pushes.add(to: &counters)
        pushes = PushTally()
        effects.add(to: &counters)
        for id in due {
            try withSlot(slot(id)) { s in
                if case .none = s.working { s.working = s.original }
            }
        }
        // Sized for every slot at once: a set that grows hashes its ids again at each doubling.
        changedIDs = Set(minimumCapacity: slots.count)
        wholeRowIDs = []
        leavesMemory = false
        // Each slot is reached through its index and changed in place: reading a record by key
        // or index copies it.
        for i in slots.indices {
            guard withSlot(i, { if case .some = $0.working { true } else { false } }) else { continue }
            engine.advance(&slots[i].working!, to: now, counters: &counters, labels: labels)
            let settled = withSlot(i) { $0.settled(at: now) }
            guard settled.changed else { continue }
            let id = ExactString(withSlot(i) { $0.id })
            changedIDs.insert(id)
            if settled.wholeRow { wholeRowIDs.insert(id) }
            if settled.leaves { leavesMemory = true }
        }
        _ = engine.expireStarts(&starts, at: now, counters: &counters)
        startChanges = starts.takeChanges()
    }

    /// Whether `id` is new to the store or its dismissal changed (its row's index entries
    /// change): its row is written whole. Known after `finish`.
    func dismissalChanged(_ id: ExactString) -> Bool { wholeRowIDs.contains(id) }

    /// Whether a record's row must be written in this commit, not later: a new activity (the
    /// tables must hold every activity replay may meet), or one that leaves memory at `now`.
    /// Known after `finish`.
    var needsRowNow: Bool {
        // The push-to-start tables are written with the counters and `applied_seq` they go
        // with, so that replay after a crash never applies their events twice.
        !startChanges.isEmpty || !wholeRowIDs.isEmpty || leavesMemory
    }

    /// The records the commit holds, moved out for memory to take (`MonitorState.publish`).
    mutating func takeWorking() -> [ActivityRecord] {
        var records: [ActivityRecord] = []
        records.reserveCapacity(slots.count)
        for i in slots.indices {
            if let r = withSlot(i, { $0.working.take() }) { records.append(r) }
        }
        slots = []
        slotIndex = [:]
        lastSlot = nil
        return records
    }
}

/// The rows a commit writes beside its events, in the same transaction, so that a replay after a
/// crash finds them with the events they belong to.
struct CommitWrites {
    /// Events whose content would not decode, with what would not (`event_verdicts`).
    var verdicts: [(seq: Int64, detail: String)]
    /// Content shapes learned (`content_shapes`).
    var shapes: [(type: String, shape: ObjectShape)]
    /// Broadcasts filed under each activity that received one (`broadcast_receivers`).
    var receivers: [(activityID: String, seq: Int64)]
    /// Broadcasts' verdicts per attributes type of their subscribers (`broadcast_verdicts`).
    var broadcastVerdicts: [(seq: Int64, attributesType: String, detail: String)]
    /// Channels created, deleted or broadcast to (`channels`).
    var channels: [(id: String, channel: ChannelBook.Channel)]
    /// Events that name a channel and no activity (`channel_events`).
    var channelEvents: [(channelID: String, seq: Int64)]
}
