import Foundation

/// The events waiting to be sent, oldest first, encoded, within a bound on count and bytes.
/// The first `inFlight` entries are the batch being sent; they are never dropped, so that an
/// event counted as dropped can never also have reached the server.
struct EventBuffer {
    struct Entry {
        let id: String
        let kind: String
        let body: Data
        /// The entry's place in the order of `append` (set there): an entry's batch ran from the
        /// front of the buffer through it, so a later refused event can tell which batches held it.
        fileprivate(set) var seq = 0

        init(id: String, kind: String, body: Data) {
            self.id = id
            self.kind = kind
            self.body = body
        }
    }

    let maxEvents: Int
    let maxBytes: Int
    private(set) var entries: [Entry] = []
    private(set) var bytes = 0
    private(set) var inFlight = 0
    /// The `seq` of the next entry appended.
    private var nextSeq = 0

    init(maxEvents: Int, maxBytes: Int) {
        self.maxEvents = max(1, maxEvents)
        self.maxBytes = max(1, maxBytes)
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    /// Entries not in flight.
    var pendingCount: Int { entries.count - inFlight }
    /// The `seq` of the oldest entry, nil when empty.
    var firstSeq: Int? { entries.first?.seq }

    /// Kinds kept longest when the buffer is full: without its start the monitor cannot place an
    /// activity's later events (no booking, no lock-screen state), and its end and dismissal
    /// close it. Updates and push results are many, and each matters less.
    static let anchors: Set = ["activity.started", "activity.ended", "activity.dismissed"]

    /// Adds an entry and, while over a bound, drops the oldest entry not in flight that is not an
    /// anchor (or the oldest anchor when only anchors are left). Returns the dropped entries
    /// (possibly the new one itself, when everything else is in flight).
    mutating func append(_ entry: Entry) -> [Entry] {
        var entry = entry
        entry.seq = nextSeq
        nextSeq += 1
        entries.append(entry)
        bytes += entry.body.count
        var dropped: [Entry] = []
        while entries.count > maxEvents || bytes > maxBytes, entries.count > inFlight {
            let victim = entries[inFlight...].firstIndex { !Self.anchors.contains($0.kind) } ?? inFlight
            let old = entries.remove(at: victim)
            bytes -= old.body.count
            dropped.append(old)
        }
        return dropped
    }

    /// The next batch from the oldest pending entries (at least one, if any), marked in flight.
    mutating func takeBatch(maxEvents: Int, maxBytes: Int) -> [Entry] {
        precondition(inFlight == 0, "one batch in flight at a time")
        var size = 2    // "[" and "]"
        var n = 0
        while n < entries.count, n < maxEvents {
            let next = entries[n].body.count + (n > 0 ? 1 : 0)    // with its comma
            if n > 0, size + next > maxBytes { break }
            size += next
            n += 1
        }
        inFlight = n
        return Array(entries[0..<n])
    }

    /// The batch in flight was answered: removes those of its entries at `indexes` (all when
    /// nil); the others become pending again, still first in line.
    mutating func complete(removing indexes: Set<Int>? = nil) {
        let batch = inFlight
        inFlight = 0
        guard let indexes else {
            bytes -= entries[0..<batch].reduce(0) { $0 + $1.body.count }
            entries.removeFirst(batch)
            return
        }
        for i in indexes.filter({ $0 >= 0 && $0 < batch }).sorted(by: >) {
            bytes -= entries[i].body.count
            entries.remove(at: i)
        }
    }

    /// Removes and returns every entry; none may be in flight.
    mutating func removeAll() -> [Entry] {
        precondition(inFlight == 0, "no batch in flight")
        let all = entries
        entries = []
        bytes = 0
        return all
    }

    /// The batch in flight failed: its entries become pending again.
    mutating func release() {
        inFlight = 0
    }
}
