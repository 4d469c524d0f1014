import Prometheus

/// The live activities, by id, in contiguous storage.
///
/// A `[String: ActivityRecord]` copied every record it handed out (a dozen reference counts
/// each) and, being a hash table of 380-byte values, reserved two to three times the room
/// its records need. Here a scrape or a list reads records in place (`withRecords`)
/// and an id finds its position through a small index.
///
/// The indexes that name a record name it by its position in `storage` (`IDPositions`, the
/// search index, the two deadline queues), not by its id: 4 bytes where a `String` took 16 and
/// its hash table's room. A removal moves the last record into the gap (`remove`), and re-points
/// those indexes at its new place.
struct ActivityTable: Sendable {
    private var storage = RecordStorage()
    private var positions = IDPositions()
    /// One block of each attributes type and app (`TypeAndApp`): thousands of records share a
    /// handful of them, and equal strings that share storage compare by identity (the scrape
    /// groups by type). By bytes: interning must not turn one spelling of a type into an
    /// equivalent other.
    private var interned: Set<ExactTypeAndApp> = []
    /// Bounds the intern pool: these fields are free text, usually from a small set.
    private static let maxInterned = 1024
    /// The ids subscribed to each broadcast channel: a broadcast finds its subscribers without
    /// walking the table.
    private var subscribed: [ExactString: Set<CompactID>] = [:]
    /// The ids and booking ids, lowercased and in order, for `?q=` (`IDSearchIndex`): kept here,
    /// as records come and go, so that it always holds exactly these records.
    private(set) var searchIndex = IDSearchIndex()
    /// The gauges that count live activities, as of `gaugeTime`: every record's contribution
    /// at that instant (`ActivityGauges`), kept as records come, change and go, so that a
    /// scrape reads them instead of walking the records.
    private var gauges: ActivityGauges
    /// When the gauges were last brought forward (`advanceGauges`); a record set since is
    /// counted as of then too.
    private(set) var gaugeTime = -Double.infinity
    /// When each record's contribution may next change by time alone (`ActivityGauges.nextChange`),
    /// by position: at least one entry per record that will change, and some outdated ones
    /// (`positions(of:)` says why they are harmless).
    private var gaugeChanges = DeadlineQueue<Int32>()
    /// Each record's next deadline (`ActivityRecord.nextDeadline`), by position: what the writer's
    /// next commit must advance (`popDueDeadlines`). Pushed when a put moves it (a replaced entry
    /// stays until it falls due: rebuilt past twice the records), or when the entry for it may
    /// have been taken; outdated entries are harmless as in `gaugeChanges`.
    private var deadlines = DeadlineQueue<Int32>()
    /// The latest instant `popDueDeadlines` took entries through: a deadline after it is still
    /// queued for its record, so a put that keeps it pushes nothing (most events move no
    /// deadline, and a push per event kept the queue near twice the records). One at or before
    /// it may have been taken, so the put that publishes its advanced record queues it again.
    private var deadlinesTakenThrough = -Double.infinity
    /// The records in phone order, by their state as of `gaugeTime` and type, for the list
    /// (`livePage`): kept on the gauges' paths, so that its cells and the gauges count the same
    /// records. Nil until the gauges are kept from an instant (`keepGauges` builds it in bulk):
    /// a table being loaded, or a replay's, pays nothing for it.
    private var phoneOrder: PhoneOrderIndex?
    /// The records with each triage problem, by their problems as of `gaugeTime`, for
    /// `GET /api/triage` (`keptTriage`): kept on the gauges' paths like the phone order, and nil
    /// until it is.
    private var triage: TriageIndex?

    init(priority10Budget: Int = EngineSettings.defaultPriority10Budget) {
        gauges = ActivityGauges(priority10Budget: priority10Budget)
    }

    /// A table of `records` as `put` one by one would make it (of records with the same id, the
    /// last), with the gauges counted from `now` (`keepGauges`): the records kept as they are,
    /// then each index built once from them (`buildIndexes`), instead of a million insertions
    /// into each. Start-up's load.
    init(loading records: consuming RecordStorage, priority10Budget: Int, gaugesFrom now: Double) {
        gauges = ActivityGauges(priority10Budget: priority10Budget)
        // Moved, not copied: `buildIndexes` changes the records in place (a copy would be the
        // whole fleet again).
        storage = consume records
        buildIndexes(gaugesFrom: now)
    }

    /// Builds every index from `storage`, as `put` keeps them: a new index adds its line here.
    /// Spread over the processors: the search index, the longest, on a thread of its own from
    /// the start, while this one makes the others one after the other (the gauges, the triage
    /// sets and the search index on three threads at once slowed the search index, which the
    /// phone order waits for), then the phone order once the search index is made: the two
    /// sorts' arrays at once were start-up's peak memory (ARCHITECTURE.md, "Loading a million
    /// live activities").
    private mutating func buildIndexes(gaugesFrom now: Double) {
        // Interned first: the one change made to the records. From here on they are only read,
        // shared with the other thread (a change now would copy them all).
        internStrings()
        let records = storage
        // Begun before the positions show every id once (so always from a store, whose rows
        // are keyed by id); when they do not, it is dropped and made again with the rest.
        let search = Background(named: "store-index") {
            IDSearchIndex(count: records.count) { (records[$0].id, records[$0].booking) }
        }
        positions = storage.withUnsafeBufferPointer { records in
            IDPositions(count: records.count) { records[$0].id }
        }
        guard positions.count == storage.count else {
            // An id more than once (never from a store: its rows are keyed by id): the last
            // record of each kept, and every index made again from those.
            _ = search.wait()
            keepLastOfEachID()
            return buildIndexes(gaugesFrom: now)
        }
        recountGauges(priority10Budget: gauges.priority10Budget, from: now)
        subscribed = [:]
        for i in storage.indices { subscribe(storage[i].id, to: storage[i].channelID) }
        rebuildDeadlines()
        triage = builtTriage(at: now, budget: gauges.priority10Budget)
        searchIndex = search.wait()
        assert(searchIndex.isInOrder { (records[$0].id, records[$0].booking) }, "in order, each once")
        phoneOrder = builtPhoneOrder(at: now)
    }

    /// Where an id came more than once (`positions` holds its last place): its last record, in
    /// the place of its first, as `put` replaces a record in place. The indexes are made again
    /// from these.
    private mutating func keepLastOfEachID() {
        var kept = RecordStorage()
        kept.reserveCapacity(positions.count)
        var placed = Set<CompactID>()
        for i in storage.indices where placed.insert(storage[i].id).inserted {
            kept.append(storage[position(of: storage[i].id)!])
        }
        storage = kept
    }

    /// `intern` for every record, in order (so that the pool is what `put` would leave): each
    /// block looked up once, the records that hold it told apart by its address read in place
    /// (no retain: start-up interns a million records alone, on the main thread; loaders share
    /// blocks already, `RecentStrings.typeAndApp`, so there are a handful), and a write only
    /// where the pool holds another.
    private mutating func internStrings() {
        // Moved out while they change, so that `intern` may change the pool (`self`) meanwhile.
        var records = storage
        storage = RecordStorage()
        var met: [(block: UInt, pooled: TypeAndApp?)] = []
        records.withUnsafeMutableBufferPointer { records in
            for i in records.indices {
                let block = RecordTypes.blockAddress(UnsafeBufferPointer(records), i)
                let pooled: TypeAndApp?
                if let k = met.firstIndex(where: { $0.block == block }) {
                    pooled = met[k].pooled
                } else {
                    let kept = intern(records[i].typeAndApp)
                    pooled = kept === records[i].typeAndApp ? nil : kept
                    // Free text beyond a handful: each looked up (never more than the pool's bound).
                    if met.count < RecordTypes.blocksTold { met.append((block, pooled)) }
                }
                if let pooled { records[i].typeAndApp = pooled }
            }
        }
        storage = records
    }

    /// How many records there are of each attributes type (by its bytes).
    func countByType() -> [ExactString: Int] {
        storage.withUnsafeBufferPointer { records in
            var types = RecordTypes(), counts: [Int] = []
            for i in records.indices {
                let type = types.number(of: records, i)
                if type == counts.count { counts.append(0) }
                counts[type] += 1
            }
            return Dictionary(uniqueKeysWithValues: zip(types.types, counts))
        }
    }

    var count: Int { storage.count }

    subscript(id: String) -> ActivityRecord? {
        get { position(of: id).map { storage[$0] } }
        set {
            assert(newValue.map { $0.activityID == id } ?? true, "a record is kept under its own id")
            if let newValue { put(newValue) } else { remove(CompactID(id)) }
        }
    }

    subscript(id: CompactID) -> ActivityRecord? { position(of: id).map { storage[$0] } }

    /// Keeps `record`, in place of the one with its id if there is one.
    mutating func put(_ record: consuming ActivityRecord) {
        let id = record.id
        let next = record.nextDeadline
        if let i = position(of: id) {
            // What the indexes hold of the record replaced, read in place; a record read from
            // here comes back with the interned strings it had: kept without a lookup (equal
            // strings that share storage compare by identity).
            if storage[i].booking != record.booking {
                let booking = record.booking
                storage.withUnsafeBufferPointer { records in
                    searchIndex.remove(at: i, activityID: id, bookingID: records[i].booking) { (records[$0].id, records[$0].booking) }
                    searchIndex.insert(at: i, activityID: id, bookingID: booking) { (records[$0].id, records[$0].booking) }
                }
            }
            if storage[i].channelID != record.channelID {
                unsubscribe(id, from: storage[i].channelID)
                subscribe(id, to: record.channelID)
            }
            // Kept as it was when it is (most events change neither).
            if storage[i].typeAndApp !== record.typeAndApp {
                record.typeAndApp = storage[i].typeAndApp.hasBytes(of: record.typeAndApp)
                    ? storage[i].typeAndApp : intern(record.typeAndApp)
            }
            countGauges(replacing: i, with: record, at: i)
            let scheduled = storage[i].nextDeadline
            storage[i] = consume record
            if let next, next != scheduled || next <= deadlinesTakenThrough { deadlines.push(next, Int32(i)) }
        } else {
            let i = storage.count, booking = record.booking
            subscribe(id, to: record.channelID)
            record.typeAndApp = intern(record.typeAndApp)
            countGauges(replacing: nil, with: record, at: i)
            storage.append(consume record)
            storage.withUnsafeBufferPointer { records in
                positions.set(id, to: i) { records[$0].id }
                searchIndex.insert(at: i, activityID: id, bookingID: booking) { (records[$0].id, records[$0].booking) }
            }
            if let next { deadlines.push(next, Int32(i)) }
        }
        rebuildQueuesIfLong()
    }

    /// Lets the records `ids` leave to their rows what those hold (`ActivityRecord.leaveToRow`),
    /// in place: nothing an index or a gauge keeps changes. Ids not here are passed over.
    mutating func leaveToRows(of ids: Set<ExactString>) {
        for id in ids { if let i = position(of: id.text) { storage[i].leaveToRow() } }
    }

    /// Forgets the record `id`, if there is one.
    mutating func remove(_ id: CompactID) {
        guard let i = position(of: id) else { return }
        let last = storage.count - 1
        // Out of the indexes while every record is where they say.
        storage.withUnsafeBufferPointer { records in
            positions.remove(id, at: i) { records[$0].id }
            searchIndex.remove(at: i, activityID: id, bookingID: records[i].booking) { (records[$0].id, records[$0].booking) }
        }
        unsubscribe(id, from: storage[i].channelID)
        uncountGauges(at: i)
        if i != last {
            // The last record moves into the gap: the indexes follow it there.
            storage.withUnsafeBufferPointer { records in
                let moved = records[last].id
                positions.move(moved, from: last, to: i)
                searchIndex.move(activityID: moved, bookingID: records[last].booking, from: last, to: i) { (records[$0].id, records[$0].booking) }
                phoneOrder?.repoint(PhoneOrderIndex.Place(records[last], at: gaugeTime), from: last, to: i) {
                    PhoneOrderKey(records[Int($0)])
                }
            }
            storage.swapAt(i, last)
            // Its queue entries name `last`: new ones name `i` (those left are outdated).
            if let next = nextChange(of: storage[i], after: gaugeTime) { gaugeChanges.push(next, Int32(i)) }
            if let next = storage[i].nextDeadline { deadlines.push(next, Int32(i)) }
        }
        storage.removeLast()
        rebuildQueuesIfLong()
    }

    /// Once the record is in place (a rebuild reads the records): a queue starts afresh past
    /// twice the records.
    private mutating func rebuildQueuesIfLong() {
        let limit = 2 * storage.count + DeadlineQueue<Int32>.slack
        if gaugeChanges.count > limit { rebuildGaugeChanges() }
        if deadlines.count > limit { rebuildDeadlines() }
    }

    private mutating func subscribe(_ id: CompactID, to channel: String?) {
        if let channel { subscribed[ExactString(channel), default: []].insert(id) }
    }

    private mutating func unsubscribe(_ id: CompactID, from channel: String?) {
        guard let channel = channel.map(ExactString.init) else { return }
        subscribed[channel]?.remove(id)
        if subscribed[channel]?.isEmpty == true { subscribed[channel] = nil }
    }

    /// The position of the record `id` (for reading it in place in `withRecords`).
    func position(of id: String) -> Int? { position(of: CompactID(id)) }

    func position(of id: CompactID) -> Int? {
        storage.withUnsafeBufferPointer { records in positions.position(of: id) { records[$0].id } }
    }

    /// Up to `max` entries of the id search whose key starts with `q` (lowercased), after `after`
    /// (`IDSearchIndex.entries(withPrefix:after:max:ids:)`): each names its record's position,
    /// which holds only until the table next changes (read the records under the same lock).
    func searchEntries(withPrefix q: String, after: IDSearchIndex.Mark?, max: Int) -> [IDSearchIndex.Entry] {
        storage.withUnsafeBufferPointer { records in
            searchIndex.entries(withPrefix: q, after: after, max: max) { (records[$0].id, records[$0].booking) }
        }
    }

    /// Where a walk of the id search that stopped at `entry` resumes (by ids, which stay put).
    func searchMark(_ entry: IDSearchIndex.Entry) -> IDSearchIndex.Mark {
        IDSearchIndex.mark(entry) { (storage[$0].id, storage[$0].booking) }
    }

    /// Every entry of the id search by its activity's id, in order (tests).
    var searchMarks: [IDSearchIndex.Mark] { searchIndex.all { (storage[$0].id, storage[$0].booking) } }

    /// The records subscribed to `channel`, in id order (a broadcast's receivers are filed so).
    func subscriberRecords(of channel: String) -> [(id: String, record: ActivityRecord)] {
        guard let ids = subscribed[ExactString(channel)] else { return [] }
        var records: [(id: String, record: ActivityRecord)] = []
        records.reserveCapacity(ids.count)
        for id in ids.sorted(by: <) { if let i = position(of: id) { records.append((id.string, storage[i])) } }
        return records
    }

    /// The channels some record is subscribed to.
    var subscribedChannels: Dictionary<ExactString, Set<CompactID>>.Keys { subscribed.keys }

    /// The ids of the records subscribed to `channel` (whatever their state).
    func subscriberIDs(of channel: String) -> Set<CompactID> { subscribed[ExactString(channel)] ?? [] }

    /// Of `ids`, the records that are `channel`'s subscribers at `now` (pending, active or
    /// stale: `isSubscribed`), read in place: counted into `count` and, when `selection` keeps
    /// any, offered to it by phone order. Called a chunk of ids at a time (`ReadHandlers`).
    func tally(_ ids: ArraySlice<CompactID>, subscribedTo channel: String, at now: Double,
               count: inout Int, into selection: inout FirstInOrder<PhoneOrderKey>) {
        for id in ids {
            guard let i = position(of: id), ExactText.equal(storage[i].channelID, channel), storage[i].isSubscribed(at: now)
            else { continue }
            count += 1
            if selection.limit > 0 { selection.offer(PhoneOrderKey(storage[i])) }
        }
    }

    /// The records, in no particular order, as a buffer valid only inside `body`. Read fields as
    /// `records[i].field`: that reads in place, where binding `records[i]` to a name or passing it
    /// to a closure copies the whole record (measured: 6× slower scrapes with a closure per record).
    func withRecords<T>(_ body: (UnsafeBufferPointer<ActivityRecord>) throws -> T) rethrows -> T {
        try storage.withUnsafeBufferPointer(body)
    }

    /// Takes the record at `position` (if any) out of the gauges and the phone order and
    /// `replacement` in, as of `gaugeTime`: with `uncountGauges`, the one path by which a
    /// record's change reaches them. `replacement` is borrowed, not an optional: wrapping the
    /// record being put in one copied it, every reference retained, in each put (PERFORMANCE.md,
    /// session 19). `place`: where `replacement` goes (its queue entry names it).
    private mutating func countGauges(replacing position: Int?, with replacement: borrowing ActivityRecord, at place: Int) {
        let budget = gauges.priority10Budget
        let new = ActivityGauges.contribution(of: replacement, at: gaugeTime, budget: budget)
        var before: Double?
        if let position {
            let old = ActivityGauges.contribution(of: storage[position], at: gaugeTime, budget: budget)
            // A record's place in the phone order is its key in the cell of its state and type (by
            // its bytes): most updates change neither (the states compared as the gauges computed
            // them), and then no place is worked out.
            let sameType = ExactString(storage[position].attributesType) == ExactString(replacement.attributesType)
            let samePlace = old.state == new.state && PhoneOrderKey(storage[position]) == PhoneOrderKey(replacement) && sameType
            if phoneOrder != nil, !samePlace {
                movePhoneOrder(position, from: PhoneOrderIndex.Place(storage[position], at: gaugeTime),
                               to: PhoneOrderIndex.Place(replacement, at: gaugeTime))
            }
            // Optional chaining: nothing is evaluated, the places included, without a triage index.
            triage?.move(from: TriageIndex.Place(storage[position], at: gaugeTime, budget: budget),
                         to: TriageIndex.Place(replacement, at: gaugeTime, budget: budget))
            if old == new, sameType {
                // Most events change no gauge: their type's counts are not looked up twice.
                before = nextChange(of: storage[position], after: gaugeTime)
            } else {
                before = uncount(old, at: position)
                gauges.count(new, type: replacement.attributesType, 1)
            }
        } else {
            if phoneOrder != nil { movePhoneOrder(place, from: nil, to: PhoneOrderIndex.Place(replacement, at: gaugeTime)) }
            triage?.move(from: nil, to: TriageIndex.Place(replacement, at: gaugeTime, budget: budget))
            gauges.count(new, type: replacement.attributesType, 1)
        }
        // An entry for the same instant is in the queue already (most events move no deadline).
        let next = nextChange(of: replacement, after: gaugeTime)
        if let next, next != before { gaugeChanges.push(next, Int32(place)) }
    }

    /// The phone order's change for the record at `position` (`PhoneOrderIndex.move`), the
    /// order's keys read from the records as they are (before the change is stored).
    private mutating func movePhoneOrder(_ position: Int, from old: PhoneOrderIndex.Place?, to new: PhoneOrderIndex.Place?) {
        storage.withUnsafeBufferPointer { records in
            phoneOrder?.move(position, from: old, to: new) { PhoneOrderKey(records[Int($0)]) }
        }
    }

    /// Takes the record at `position` out of the gauges and the phone order (it is removed).
    private mutating func uncountGauges(at position: Int) {
        let budget = gauges.priority10Budget
        if phoneOrder != nil { movePhoneOrder(position, from: PhoneOrderIndex.Place(storage[position], at: gaugeTime), to: nil) }
        triage?.move(from: TriageIndex.Place(storage[position], at: gaugeTime, budget: budget), to: nil)
        _ = uncount(ActivityGauges.contribution(of: storage[position], at: gaugeTime, budget: budget), at: position)
    }

    /// Takes `old`, the contribution of the record at `position`, out of the gauges; its next
    /// change, which its queue entry is for.
    private mutating func uncount(_ old: ActivityGauges.Contribution, at position: Int) -> Double? {
        gauges.count(old, type: storage[position].attributesType, -1)
        return nextChange(of: storage[position], after: gaugeTime)
    }

    /// Brings the gauges forward to `now`: only the records whose contribution may have changed
    /// since `gaugeTime` are counted again. The writer calls it as it commits and as time passes.
    mutating func advanceGauges(to now: Double) {
        guard now > gaugeTime else { return }
        let budget = gauges.priority10Budget
        // Popped before `positions(of:)` is called: as its argument, the pop ran while that call
        // held a copy of `self`, so every pop copied the whole queue (a million entries at a
        // million live activities, in every commit with a change due).
        let due = gaugeChanges.popDue(now)
        for i in positions(of: due) {
            gauges.count(storage[i], at: gaugeTime, -1)
            gauges.count(storage[i], at: now, 1)
            if phoneOrder != nil {
                movePhoneOrder(i, from: PhoneOrderIndex.Place(storage[i], at: gaugeTime), to: PhoneOrderIndex.Place(storage[i], at: now))
            }
            triage?.move(from: TriageIndex.Place(storage[i], at: gaugeTime, budget: budget),
                         to: TriageIndex.Place(storage[i], at: now, budget: budget))
            if let next = nextChange(of: storage[i], after: now) {
                gaugeChanges.push(next, Int32(i))
            }
        }
        gaugeTime = now
        rebuildQueuesIfLong()
    }

    /// The gauges at `now`, without changing the table: those kept, corrected by the records whose
    /// contribution changed since `gaugeTime` (a scrape may run ahead of the writer); counted
    /// afresh only for an instant before `gaugeTime` (a clock set back) or another budget.
    func gauges(at now: Double, priority10Budget budget: Int) -> ActivityGauges {
        guard budget == gauges.priority10Budget, now >= gaugeTime else {
            return ActivityGauges.recount(self, at: now, budget: budget)
        }
        return gauges(at: now, correcting: changed(at: now))
    }

    /// The kept gauges brought to `now` (not before `gaugeTime`) by the records at `changed`
    /// (`changed(at: now)`).
    private func gauges(at now: Double, correcting changed: [Int]) -> ActivityGauges {
        var result = gauges
        for i in changed {
            result.count(storage[i], at: gaugeTime, -1)
            result.count(storage[i], at: now, 1)
        }
        return result
    }

    /// The positions of the records whose contribution may have changed between `gaugeTime` and
    /// `now` (the gauge queue's due entries, each record once).
    private func changed(at now: Double) -> [Int] {
        now > gaugeTime ? positions(of: gaugeChanges.due(at: now)) : []
    }

    /// The records at the queue entries `due`, each once. An entry may be outdated: its record
    /// moved (a fresh entry names its new place), and another record, or none (past the end),
    /// is there now. That is harmless to every reader of the queues: a record brought forward,
    /// or corrected, from `gaugeTime` to `now` that did not change is taken out and counted back
    /// as it was (the gauges, the phone order and the triage sets are each a function of the
    /// record and the instant); a record whose deadline is not due is advanced by the writer to
    /// no change (`popDueDeadlines`). A record that does change at `now` always has an entry at
    /// its own place.
    private func positions(of due: [Int32]) -> [Int] {
        var seen = Set<Int32>()
        return due.compactMap { $0 < storage.count && seen.insert($0).inserted ? Int($0) : nil }
    }

    /// A page of the list at `now`: the first `limit` live records in phone order, after
    /// `after`, of `state` and of type `type` when given (`==` on strings, the list's filter),
    /// and the live records of that type counted by state at `now` (in `ActivityState.counted`
    /// order). Read from the kept order (`PhoneOrderIndex`) and gauges, corrected by the records
    /// whose state may have changed since `gaugeTime`: it costs the page, the cells and those
    /// records. Nil when the order is not kept or `now` is before `gaugeTime` (a clock set
    /// back): the caller walks the records instead (`ReadHandlers.walkedPage`).
    func livePage(at now: Double, state: ActivityState?, type: String?, after: PhoneOrderKey?,
                  limit: Int) -> (records: [ActivityRecord], counts: SIMD4<Int>)? {
        guard let phoneOrder, now >= gaugeTime else { return nil }
        // The gauge queue's due entries, read once for the page and the counts.
        let changed = changed(at: now)
        // Out of the cells they were in, into the page by their state at `now`.
        var moved = Set<CompactID>()
        var keys: [PhoneOrderKey] = []
        for i in changed {
            let stateNow = storage[i].state(at: now)
            guard stateNow != storage[i].state(at: gaugeTime) else { continue }
            moved.insert(storage[i].id)
            guard stateNow != .dismissed, state.map({ $0 == stateNow }) ?? true,
                  type.map({ $0 == storage[i].attributesType }) ?? true else { continue }
            let key = PhoneOrderKey(storage[i])
            if after.map({ PhoneOrderKey.ordered($0, key) }) ?? true { keys.append(key) }
        }
        keys += storage.withUnsafeBufferPointer { records in
            phoneOrder.first(limit, state: state, type: type, after: after, skipping: moved) { PhoneOrderKey(records[Int($0)]) }
        }
        keys.sort(by: PhoneOrderKey.ordered)
        let records = keys.prefix(limit).compactMap { position(of: $0.activityID).map { storage[$0] } }
        var counts = SIMD4<Int>(repeating: 0)
        for (t, c) in gauges(at: now, correcting: changed).byType
        where type.map({ $0 == t.text }) ?? true {
            counts &+= c.states
        }
        return (records, counts)
    }

    /// Per triage problem (in `TriageProblem.allCases` order; `startNotStarted`'s empty), how
    /// many live records have it at `now` and the positions of the first `limit` of them in the
    /// page's order (`TriageKey`). Read from the kept sets (`TriageIndex`), corrected by the
    /// records whose problems may have changed since `gaugeTime`: it costs the problems times the
    /// page, and those records. Nil when the sets are not kept, `now` is before `gaugeTime` (a
    /// clock set back) or `budget` is not the table's: the caller walks the records instead
    /// (`ReadHandlers.walkedTriage`).
    func keptTriage(at now: Double, limit: Int, priority10Budget budget: Int) -> [(count: Int, positions: [Int])]? {
        guard let triage, now >= gaugeTime, budget == gauges.priority10Budget else { return nil }
        let problems = TriageProblem.allCases.indices
        var moved = Set<CompactID>()
        var counts = problems.map { triage.count(of: $0) }
        var added = [[TriageKey]](repeating: [], count: problems.count)
        for i in changed(at: now) {
            let kept = TriageIndex.Place(storage[i], at: gaugeTime, budget: budget)
            let current = TriageIndex.Place(storage[i], at: now, budget: budget)
            guard kept != current else { continue }
            moved.insert(storage[i].id)
            for p in problems {
                if kept.has(p) { counts[p] -= 1 }
                if current.has(p) { counts[p] += 1; added[p].append(current.key) }
            }
        }
        return problems.map { p in
            var keys = added[p] + triage.first(limit, of: p, skipping: moved)
            keys.sort(by: TriageKey.ordered)
            return (counts[p], keys.prefix(limit).compactMap { position(of: $0.activityID) })
        }
    }

    /// The kept triage sets (tests compare them with sets built afresh: `TriageIndex(_:at:budget:)`).
    var keptTriageSets: TriageIndex? { triage }

    /// Where the queue of gauge changes keeps its entries (tests: `DeadlineQueue.storageAddress`).
    var gaugeChangesStorage: UInt { gaugeChanges.storageAddress }

    /// The kept phone order's cells, by key (tests compare them with cells built afresh:
    /// `PhoneOrderIndex(_:at:)`).
    var keptPhoneOrder: [PhoneOrderIndex.Cell: [PhoneOrderKey]]? {
        storage.withUnsafeBufferPointer { records in phoneOrder?.contents { PhoneOrderKey(records[Int($0)]) } }
    }

    /// When time alone next changes the gauges (at the latest).
    var nextGaugeChange: Double? { gaugeChanges.earliest }

    /// Counts the gauges afresh for `budget` (the store's `--priority10-budget`) as of `now`, and
    /// builds the phone order in bulk (O(n log n)): a table loaded by `put` alone calls it once.
    mutating func keepGauges(priority10Budget budget: Int, from now: Double) {
        recountGauges(priority10Budget: budget, from: now)
        phoneOrder = builtPhoneOrder(at: now)
        triage = builtTriage(at: now, budget: budget)
    }

    /// The gauges counted from the records as of `now`, and their queue of changes.
    private mutating func recountGauges(priority10Budget budget: Int, from now: Double) {
        gaugeTime = now
        gauges = ActivityGauges.recount(self, at: now, budget: budget)
        rebuildGaugeChanges()
    }

    /// The records' phone order as of `now`, built in bulk (the ids distinct).
    private func builtPhoneOrder(at now: Double) -> PhoneOrderIndex {
        storage.withUnsafeBufferPointer { PhoneOrderIndex($0, at: now) }
    }

    /// The records' triage problems as of `now`, built in bulk (the ids distinct).
    private func builtTriage(at now: Double, budget: Int) -> TriageIndex {
        storage.withUnsafeBufferPointer { TriageIndex($0, at: now, budget: budget) }
    }

    /// When `record`'s contribution to the gauges, its place in the phone order or its triage
    /// problems may next change by time alone: the queue of changes holds this instant.
    private func nextChange(of record: borrowing ActivityRecord, after now: Double) -> Double? {
        let gauge = ActivityGauges.nextChange(of: record, after: now, budget: gauges.priority10Budget)
        guard let frozen = TriageProblem.nextChange(of: record, after: now) else { return gauge }
        return min(gauge ?? frozen, frozen)
    }

    private mutating func rebuildGaugeChanges() {
        gaugeChanges = queue { nextChange(of: $0, after: gaugeTime) }
    }

    /// Takes the oldest-started records out until `target` are left; returns how many went.
    /// Sorts the start times (8 bytes a record), so callers evict in batches, not one by one.
    mutating func removeOldestStarted(downTo target: Int) -> Int {
        let excess = storage.count - max(0, target)
        guard excess > 0 else { return 0 }
        let cutoff = storage.map(\.startedAt).sorted()[excess - 1]
        var ids: [CompactID] = []
        ids.reserveCapacity(excess)
        for i in storage.indices where ids.count < excess && storage[i].startedAt <= cutoff {
            ids.append(storage[i].id)
        }
        for id in ids { remove(id) }
        return ids.count
    }

    /// The deadline queue afresh: each record's next deadline, and nothing else.
    private mutating func rebuildDeadlines() {
        deadlines = queue { $0.nextDeadline }
    }

    /// A queue of each record's `instant`, by position: at most one entry a record, so room for
    /// that many is made at once (appends alone could leave as much again spare).
    private func queue(of instant: (borrowing ActivityRecord) -> Double?) -> DeadlineQueue<Int32> {
        var times: [Double] = [], positions: [Int32] = []
        times.reserveCapacity(storage.count)
        positions.reserveCapacity(storage.count)
        for i in storage.indices {
            if let next = instant(storage[i]) {
                times.append(next)
                positions.append(Int32(i))
            }
        }
        return DeadlineQueue(times: times, ids: positions)
    }

    /// When the earliest deadline falls (at the latest: some entries are outdated).
    var earliestDeadline: Double? { deadlines.earliest }

    /// How many due deadlines one commit takes at most. A restart after hours down finds every
    /// live activity due at once: a million in one transaction took 75 s and 2 GB, and start-up
    /// waited for it. The rest follow in commits of their own, between the requests'.
    static let duePerCommit = 2_000

    /// Takes the deadlines due at `now`, earliest first, at most `limit` entries: the ids of the
    /// records to advance, each once (some of whose deadline has not come: `positions(of:)`),
    /// and whether it stopped at `limit` with more due (then another commit should follow: the
    /// ids alone cannot say, as outdated entries give no id, or one already given). Only a full
    /// batch asks for more, so that an entry that falls due again at once cannot keep the writer
    /// committing.
    mutating func popDueDeadlines(_ now: Double, limit: Int = .max) -> (ids: [String], moreDue: Bool) {
        let due = deadlines.popDue(now, limit: limit)
        deadlinesTakenThrough = max(deadlinesTakenThrough, now)
        let moreDue = due.count == limit && (deadlines.earliest ?? .infinity) <= now
        return (positions(of: due).map { storage[$0].activityID }, moreDue)
    }

    /// Schedules the record `id` (if it is here) at `at`: due ids given back by a commit that failed.
    mutating func scheduleDeadline(_ at: Double, of id: String) {
        if let i = position(of: id) { deadlines.push(at, Int32(i)) }
    }

    /// How many entries the deadline queue holds (tests).
    var queuedDeadlines: Int { deadlines.count }

    /// How many sweeps of `duePerCommit` take every entry queued now: a caller that waits for
    /// what is due waits for that many at most, so that an entry falling due again at once
    /// cannot hold it.
    var sweepsForQueuedDeadlines: Int { deadlines.count / Self.duePerCommit + 1 }

    private mutating func intern(_ block: TypeAndApp) -> TypeAndApp {
        if let known = interned.firstIndex(of: ExactTypeAndApp(block: block)) { return interned[known].block }
        if interned.count < Self.maxInterned { interned.insert(ExactTypeAndApp(block: block)) }
        return block
    }
}
