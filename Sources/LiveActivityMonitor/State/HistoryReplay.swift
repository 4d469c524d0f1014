import JSON
import LiveActivityWire
import Prometheus

/// A booking's or an activity's stored events applied again through a fresh `StateEngine`, the
/// writer's own code, in the order the writer applied them: what each event did (its effect, and
/// what it met and changed), the activities as they were at an instant, and what time alone
/// changed. The read API's effects, `?at=` answers and time-driven rows all come from here, so
/// that no rule has a second implementation (not in the API, not in the dashboard).
///
/// The writer ends each commit by letting time pass to the commit's `now` for every activity;
/// the replay does the same between the receipt times of the events it replays. Sweeps that
/// ran between two commits of the booking, and commits of other bookings, are not in the event
/// log: an end or dismissal reported after a deadline it happened before (an app's end reported
/// after the 8-hour end passed) may have been judged against a record the writer had already
/// moved past that deadline. Everything else is applied exactly as the writer applied it.
struct HistoryReplay {
    /// What an event met: the activity as it was just before the event (at the event's time).
    struct Before: Equatable {
        var state: ActivityState
        var contentTimestamp: Double
        var tokenFingerprint: String?
    }

    /// One key of the content shown that an event changed; nil for absent.
    struct ContentChange: Equatable {
        var key: String
        var from: JSONValue?
        var to: JSONValue?
    }

    /// What the replay says about one event.
    struct Note: Equatable {
        var effect: EventEffect
        var before: Before?
        var contentChanges: [ContentChange] = []
        /// The token APNs invalidated with this push (its reason), if it did.
        var tokenInvalidated: String?
        /// The event's type and APNs' answer (a push's or a channel request's), for the effect's words.
        var type: EventType
        var answer: (status: Int, reason: String?)?

        /// The effect in words (`EventEffect.sentence`).
        var sentence: String { effect.sentence(of: type, answer: answer) }

        init(effect: EventEffect, of event: Event) {
            self.effect = effect
            type = event.type
            answer = event.push.map { ($0.status, $0.reason) } ?? event.channelRequest.map { ($0.status, $0.reason) }
        }

        static func == (a: Note, b: Note) -> Bool {
            a.effect == b.effect && a.before == b.before && a.contentChanges == b.contentChanges
                && a.tokenInvalidated == b.tokenInvalidated && a.type == b.type
                && a.answer?.status == b.answer?.status && a.answer?.reason == b.answer?.reason
        }
    }

    struct Passage: Equatable {
        var activityID: String
        var transition: TimeTransition
    }

    /// What a replay judges with beside the rows, as the writer did: every read's replay (the
    /// answers, the files, `history`) is given all of it, or the same events read differently.
    struct Context {
        /// The writer's (`--delivery-grace`, `--start-window`, `--priority10-budget`).
        var settings: EngineSettings
        /// Without `until`, the instant whose passed start windows count (the read's now).
        var now: Double
        /// The start pushes the writer judged `superseded_token` when it stored them
        /// (`judgedSuperseded`): the device events that decided it are not the booking's.
        var judged: Set<Int64>
        /// The store's channel book (the channel requests are not the booking's events).
        var channels: ChannelBook
    }

    private let engine: StateEngine
    /// The replay's own push-to-start book: the booking's start pushes and their outcomes.
    private var starts = PushToStartBook()
    private var counters = MonitorCounters()
    private var pushes = PushTally()
    private var labels = AttributesTypeLabels()
    /// Judges nothing: each event's stored verdict stands (`ContentShapes.recorded`).
    private var shapes = ContentShapes.recorded
    /// The channels as the store knows them: a broadcast is judged by what was stored before it.
    private var channels: ChannelBook
    private var timePassedTo = -Double.infinity
    private var startsExpiredFor: Double?
    /// Each activity's content as last parsed: the next change's "before" (parsing both sides of
    /// every change was a tenth of a booking's answer).
    private var parsed: [ExactString: (text: JSONText, object: JSONObject)] = [:]

    /// The activities the replayed events started, as they were at `until` (or after every event),
    /// by id's bytes, as the tables tell activities apart (`record(_:)` reads one by its id).
    private(set) var records: [ExactString: ActivityRecord] = [:]
    /// By event `seq`; none for an event not replayed (after `until`, unreadable, skipped).
    private(set) var notes: [Int64: Note] = [:]
    private let noting: Set<Int64>?
    /// What time alone changed, in time order: up to `until`, or, without one, every change the
    /// events so far make due, including those still to come.
    private(set) var passages: [Passage] = []

    /// - Parameters:
    ///   - rows: stored events in any order; applied by `seq`.
    ///   - until: replays the events that occurred by this instant and brings the activities to
    ///     it. Nil: every event, then the changes time will make.
    ///   - skipping: activities whose events are left out (their start is no longer stored).
    ///   - noting: the events whose notes are wanted (an answer's page); nil for all. The others
    ///     are applied alike, without the cost and memory of their notes.
    ///   - context: what the writer judged with that the rows do not hold (`Context`); required,
    ///     so that no reader's replay judges with defaults the server does not run with.
    init(_ rows: [StoredEventRow], until: Double? = nil, skipping: Set<ExactString> = [], noting: Set<Int64>? = nil,
         context: Context) {
        self.noting = noting
        self.channels = context.channels
        engine = StateEngine(settings: context.settings)
        starts.judgedSuperseded = context.judged
        let now = context.now
        let limit = until ?? .infinity
        var commit: Double?, finished: Double?
        for row in rows.sorted(by: { $0.seq < $1.seq }) {
            if row.receivedAt != commit {
                finished = commit.map { max($0, finished ?? $0) }
                commit = row.receivedAt
            }
            guard row.effectiveTime <= limit, let event = row.event else { continue }
            if let id = event.activityID, skipping.contains(ExactString(id)) { continue }
            // The writer ended the commits before this one by letting time pass to their `now`.
            if let finished { letTimePass(to: min(finished, limit)) }
            // …and began this one by letting start windows run out at its `now`.
            if startsExpiredFor != commit {
                startsExpiredFor = commit
                amend(engine.expireStarts(&starts, at: min(row.receivedAt, limit), counters: &counters))
            }
            apply(event, receivedAt: row.receivedAt, seq: row.seq)
        }
        if let until {
            letTimePass(to: until)
        } else {
            amend(engine.expireStarts(&starts, at: now, counters: &counters))
            projectDeadlines()
        }
        // In time order; at one instant, by activity, then stale, ended, dismissed (a total order:
        // two replays of the same events list them alike).
        passages.sort {
            let a = $0.transition, b = $1.transition
            if a.at != b.at { return a.at < b.at }
            if !ExactText.equal($0.activityID, $1.activityID) { return ExactText.precedes($0.activityID, $1.activityID) }
            return TimeTransition.Kind.allCases.firstIndex(of: a.kind)! < TimeTransition.Kind.allCases.firstIndex(of: b.kind)!
        }
    }

    /// Those of `known` that had started, as they were, in `known`'s order.
    func records(among known: [ActivityRecord]) -> [ActivityRecord] {
        known.compactMap { record($0.activityID) }
    }

    /// The activity `id` as it was, nil if it had not started.
    func record(_ id: String) -> ActivityRecord? { records[ExactString(id)] }

    private mutating func apply(_ event: Event, receivedAt: Double, seq: Int64) {
        if event.isBroadcast { return broadcast(event, receivedAt: receivedAt, seq: seq) }
        var record = event.activityID.flatMap { self.record($0) }
        let old = record
        let outcome = engine.apply(event, seq: seq, receivedAt: receivedAt, to: &record, counters: &counters,
                                   pushes: &pushes, labels: &labels, shapes: &shapes, starts: &starts,
                                   channels: &channels)
        let t = outcome.at
        defer { amend(outcome.verdicts) }
        guard noting?.contains(seq) ?? true else {
            if let record {
                records[ExactString(record.activityID)] = record
                passages += outcome.passed.map { Passage(activityID: record.activityID, transition: $0) }
            }
            return
        }
        var note = Note(effect: outcome.effect, of: event)
        note.before = old.map { Before(state: $0.state(at: t), contentTimestamp: $0.contentTimestamp, tokenFingerprint: $0.tokenFingerprint) }
        if let record {
            if record.contentState != old?.contentState {
                let before = content(old?.contentState, of: record.activityID)
                note.contentChanges = Self.changes(from: before, to: content(record.contentState, of: record.activityID))
            }
            if record.tokenInvalidReason != nil, old?.tokenInvalidReason == nil {
                note.tokenInvalidated = record.tokenInvalidReason
            }
            records[ExactString(record.activityID)] = record
            passages += outcome.passed.map { Passage(activityID: record.activityID, transition: $0) }
        }
        notes[seq] = note
    }

    /// A broadcast, as the writer applied it: counted once, then taken by each activity of the
    /// replay subscribed to its channel (the reads bring a broadcast only to the activities the
    /// writer filed it under). Its note is what it did to the first of them, by id (an
    /// activity's answer has one), else the broadcast's own effect.
    private mutating func broadcast(_ event: Event, receivedAt: Double, seq: Int64) {
        var none: ActivityRecord?
        let outcome = engine.apply(event, seq: seq, receivedAt: receivedAt, to: &none, counters: &counters,
                                   pushes: &pushes, labels: &labels, shapes: &shapes, starts: &starts,
                                   channels: &channels)
        var note = Note(effect: outcome.effect, of: event)
        guard outcome.effect.why == nil, let channel = event.channelID else {
            if noting?.contains(seq) ?? true { notes[seq] = note }
            return
        }
        var first = true
        var (received, pushContent) = StateEngine.receivable(event, receivedAt: receivedAt)
        for id in records.keys.sorted() where ExactText.equal(records[id]!.channelID, channel) {
            let old = records[id]!
            var record = old
            let taken = engine.receive(received, seq: seq, on: &record, counters: &counters,
                                       labels: labels, shapes: shapes, content: &pushContent)
            records[id] = record
            passages += taken.passed.map { Passage(activityID: id.text, transition: $0) }
            guard first else { continue }
            first = false
            var effect = taken.effect
            effect.warnings = outcome.effect.warnings + effect.warnings
            note.effect = effect
            note.before = Before(state: old.state(at: taken.at), contentTimestamp: old.contentTimestamp,
                                 tokenFingerprint: old.tokenFingerprint)
            if record.contentState != old.contentState {
                let before = content(old.contentState, of: id.text)
                note.contentChanges = Self.changes(from: before, to: content(record.contentState, of: id.text))
            }
        }
        if noting?.contains(seq) ?? true { notes[seq] = note }
    }

    /// Adds later verdicts to the notes of the events they judge.
    private mutating func amend(_ verdicts: [StateEngine.Verdict]) {
        for verdict in verdicts where notes[verdict.seq] != nil { verdict.amend(&notes[verdict.seq]!.effect) }
    }

    private mutating func letTimePass(to time: Double) {
        guard time > timePassedTo else { return }
        timePassedTo = time
        amend(engine.expireStarts(&starts, at: time, counters: &counters))
        for id in records.keys {
            let passed = engine.advance(&records[id]!, to: time, counters: &counters, labels: labels)
            passages += passed.map { Passage(activityID: id.text, transition: $0) }
        }
    }

    /// Lets time run out for every activity: each change the events so far make due.
    private mutating func projectDeadlines() {
        for id in records.keys {
            while let next = records[id]!.nextDeadline {
                let passed = engine.advance(&records[id]!, to: next, counters: &counters, labels: labels)
                if passed.isEmpty { break }
                passages += passed.map { Passage(activityID: id.text, transition: $0) }
            }
        }
    }

    /// A content-state as an object (empty when absent), parsed once per activity and text.
    private mutating func content(_ text: JSONText?, of activityID: String) -> JSONObject {
        guard let text else { return JSONObject() }
        if let known = parsed[ExactString(activityID)], known.text == text { return known.object }
        guard case .object(let object)? = try? JSONParser.parse(text.text) else { return JSONObject() }
        parsed[ExactString(activityID)] = (text, object)
        return object
    }

    /// The keys whose values differ between two content-states, in the order the old one had
    /// them, then the new keys.
    static func changes(from before: JSONObject, to after: JSONObject) -> [ContentChange] {
        var out: [ContentChange] = []
        for (key, value) in before.entries where after[key] != value {
            out.append(ContentChange(key: key, from: value, to: after[key]))
        }
        for (key, value) in after.entries where before[key] == nil {
            out.append(ContentChange(key: key, from: nil, to: value))
        }
        return out
    }
}

extension HistoryReplay {
    /// Whether the event that started `record` is among `rows` (pruning deletes by age, so when
    /// it is gone every earlier event is too, and the replay cannot rebuild the activity).
    static func startIsStored(_ record: ActivityRecord, in rows: [StoredEventRow]) -> Bool {
        rows.contains { ExactText.equal($0.activityID, record.activityID) && $0.effectiveTime <= record.startedAt }
    }
}
