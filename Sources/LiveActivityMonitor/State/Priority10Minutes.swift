/// The priority-10 pushes of an activity's last hour, counted per minute.
///
/// Bounded whatever the push rate: at most 61 minutes are kept. A list of send times grew by
/// one per push (a ride whose every GPS fix went out at priority 10, one every 2 s, carried
/// 1,800 of them, in memory and in the row rewritten at each of its events). APNs does not
/// publish the budget these pushes spend, so a count to the minute says as much as an exact one.
public struct Priority10Minutes: Hashable, Sendable {
    struct Minute: Hashable {
        /// Minutes since the Unix epoch.
        var index: Int32
        var pushes: UInt32
    }

    /// Minutes with at least one push, oldest first, none more than `span` before the newest.
    private(set) var minutes: [Minute] = []
    /// Pushes in `minutes`: what `count(at:)` returns at most (a cheap first test for scrapes).
    public private(set) var total = 0

    /// The window: the minute of `now` and the 60 before it, so every push of the exact hour
    /// before `now` counts (and at most one minute's more).
    static let span: Int32 = Int32(LockScreenRules.priority10Window / 60)

    public init() {}

    static func minute(of t: Double) -> Int32 {
        Int32(clamping: Int64((t / 60).rounded(.down)))
    }

    /// Counts a push sent at `t` (in any order; one older than the window is dropped).
    public mutating func record(_ t: Double) {
        add(Self.minute(of: t), pushes: 1)
    }

    private mutating func add(_ index: Int32, pushes: UInt32) {
        // In 64 bits: a damaged row's minute may lie at either end of Int32.
        if let newest = minutes.last?.index, Int64(index) < Int64(newest) - Int64(Self.span) { return }
        // Pushes arrive nearly in order: look from the newest end.
        var i = minutes.endIndex
        while i > minutes.startIndex, minutes[i - 1].index > index { i -= 1 }
        if i > minutes.startIndex, minutes[i - 1].index == index {
            minutes[i - 1].pushes &+= pushes
        } else {
            minutes.insert(Minute(index: index, pushes: pushes), at: i)
        }
        total += Int(pushes)
        let oldestKept = Int64(minutes[minutes.count - 1].index) - Int64(Self.span)
        while let first = minutes.first, Int64(first.index) < oldestKept {
            total -= Int(first.pushes)
            minutes.removeFirst()
        }
    }

    /// The next minute boundary after `t` while `count(at:)` may still change (it is constant
    /// within a minute, and zero from `span` minutes after the newest); nil after that.
    func nextChange(after t: Double) -> Double? {
        guard let oldest = minutes.first?.index, let newest = minutes.last?.index else { return nil }
        // Before any time (a table not yet brought to a clock's time): zero until the oldest minute.
        guard t.isFinite else { return t < 0 ? Double(oldest) * 60 : nil }
        let current = Int64(Self.minute(of: t))
        guard current <= Int64(newest) + Int64(Self.span) else { return nil }
        return Double(current + 1) * 60
    }

    /// Priority-10 pushes sent in the hour before `now` (to the minute: see `span`).
    public func count(at now: Double) -> Int {
        let current = Self.minute(of: now)
        var count = 0
        for m in minutes.reversed() {
            if m.index < current - Self.span { break }
            if m.index <= current { count += Int(m.pushes) }
        }
        return count
    }
}

// MARK: Stored form

extension Priority10Minutes {
    /// Marks the stored form: a version byte, then (minute Int32, pushes UInt32) little-endian
    /// pairs. Its odd length tells it from the forms written before it (below).
    static let blobVersion: UInt8 = 1

    /// The `priority10_times` column.
    var blob: [UInt8] {
        var bytes = [Self.blobVersion]
        bytes.reserveCapacity(1 + minutes.count * 8)
        for m in minutes {
            withUnsafeBytes(of: m.index.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: m.pushes.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// Reads the column: this form, or the send times that earlier versions stored (8-byte
    /// little-endian doubles; before those, comma-separated decimal text).
    init(blob bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { Priority10Minutes(blob: $0) }
    }

    /// The same from the column's bytes in place (start-up reads them so: no copy of the blob).
    init(blob raw: UnsafeRawBufferPointer) {
        self.init()
        if raw.first == Self.blobVersion, raw.count % 8 == 1 {
            let stored = (0..<(raw.count / 8)).map { i in
                Minute(index: Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 1 + i * 8, as: Int32.self)),
                       pushes: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 5 + i * 8, as: UInt32.self)))
            }
            // What `add` leaves (oldest first, within `span` of the newest) is kept as it is:
            // start-up reads a million of these, and `add` one minute at a time cost 2 % of it.
            if let newest = stored.last?.index, Int64(stored.first!.index) >= Int64(newest) - Int64(Self.span),
               zip(stored, stored.dropFirst()).allSatisfy({ $0.index < $1.index }) {
                minutes = stored
                total = stored.reduce(0) { $0 + Int($1.pushes) }
            } else {
                for m in stored { add(m.index, pushes: m.pushes) }
            }
        } else if raw.count % 8 == 0 {
            for i in 0..<(raw.count / 8) {
                record(Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))))
            }
        }
    }

    init(text: String) {
        self.init()
        // Split on UTF-8 bytes: `String.split` walks grapheme clusters.
        for part in text.utf8.split(separator: UInt8(ascii: ",")) {
            if let t = Double(Substring(part)) { record(t) }
        }
    }
}
