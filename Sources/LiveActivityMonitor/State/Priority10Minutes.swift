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

    /// The minutes with at least one push, oldest first, none more than `span` before the newest,
    /// packed: nothing, or the oldest minute (`Int32`, little-endian), then for each minute its
    /// distance from the oldest (one byte: at most `span`) and its pushes (LEB128, one byte below
    /// 128). A ride's seven minutes take 18 bytes here, in a 48-byte heap block (`PackedBytes`),
    /// where eight-byte `Minute`s took a 96-byte one (docs/ARCHITECTURE.md, "What one record
    /// costs"). One encoding per set of minutes, so equal windows compare equal.
    private var packed = PackedBytes()
    /// Pushes in the minutes (at most `UInt32.max`): what `count(at:)` returns at most, a cheap
    /// first test for scrapes. Four bytes, so that the window takes 12 of the record's bytes.
    private var storedTotal: UInt32 = 0
    public var total: Int { Int(storedTotal) }

    /// The window: the minute of `now` and the 60 before it, so every push of the exact hour
    /// before `now` counts (and at most one minute's more).
    static let span: Int32 = Int32(LockScreenRules.priority10Window / 60)

    public init() {}

    /// The window of `minutes`, which are what `add` leaves: ordered, distinct, within `span` of
    /// the newest.
    private init(ordered minutes: some Collection<Minute>) {
        guard let oldest = minutes.first?.index else { return }
        var bytes = 4
        for m in minutes { bytes += 1 + Self.lengthOf(m.pushes) }
        var sum: UInt64 = 0
        packed = PackedBytes(count: bytes) { buffer in
            withUnsafeBytes(of: oldest.littleEndian) { for (i, b) in $0.enumerated() { buffer[i] = b } }
            var count = 4
            for m in minutes {
                sum += UInt64(m.pushes)
                buffer[count] = UInt8(m.index - oldest)
                count += 1
                Self.write(m.pushes, into: buffer, at: &count)
            }
        }
        storedTotal = UInt32(clamping: sum)
    }

    private static func lengthOf(_ pushes: UInt32) -> Int {
        var n = 1, v = pushes >> 7
        while v != 0 { n += 1; v >>= 7 }
        return n
    }

    /// A count as LEB128 at `i`, which it moves past.
    private static func write(_ pushes: UInt32, into buffer: UnsafeMutableBufferPointer<UInt8>, at i: inout Int) {
        var v = pushes
        while v >= 0x80 {
            buffer[i] = UInt8(truncatingIfNeeded: v) | 0x80
            v >>= 7
            i += 1
        }
        buffer[i] = UInt8(v)
        i += 1
    }

    /// The LEB128 count at `i`, which it moves past.
    private static func readCount(_ bytes: UnsafeBufferPointer<UInt8>, at i: inout Int) -> UInt32 {
        var pushes: UInt32 = 0, shift: UInt32 = 0
        repeat {
            pushes |= UInt32(bytes[i] & 0x7F) << shift
            shift += 7
            i += 1
        } while bytes[i - 1] & 0x80 != 0
        return pushes
    }

    /// Calls `body` with each minute, oldest first, read in place.
    private func forEachMinute(_ body: (Minute) -> Void) {
        packed.withUnsafeBufferPointer { bytes in
            guard bytes.count >= 4 else { return }
            let oldest = Int32(littleEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(as: Int32.self))
            var i = 4
            while i < bytes.count {
                let index = oldest + Int32(bytes[i])
                i += 1
                body(Minute(index: index, pushes: Self.readCount(bytes, at: &i)))
            }
        }
    }

    /// The minutes, oldest first.
    var minutes: [Minute] {
        var all: [Minute] = []
        forEachMinute { all.append($0) }
        return all
    }

    /// The oldest and newest minutes kept.
    private var bounds: (oldest: Int32, newest: Int32)? {
        var bounds: (Int32, Int32)?
        forEachMinute { bounds = (bounds?.0 ?? $0.index, $0.index) }
        return bounds
    }

    static func minute(of t: Double) -> Int32 {
        Int32(clamping: Int64((t / 60).rounded(.down)))
    }

    /// Counts a push sent at `t` (in any order; one older than the window is dropped).
    public mutating func record(_ t: Double) {
        add(Self.minute(of: t), pushes: 1)
    }

    /// Adds `pushes` in minute `index`: the minutes unpacked, changed and packed again (at most
    /// 61 of them), unless `index` is the newest minute.
    private mutating func add(_ index: Int32, pushes: UInt32) {
        if addToNewest(index, pushes: pushes) { return }
        var minutes = self.minutes
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
        let oldestKept = Int64(minutes[minutes.count - 1].index) - Int64(Self.span)
        let expired = minutes.prefix { Int64($0.index) < oldestKept }.count
        self = Priority10Minutes(ordered: minutes.dropFirst(expired))
    }

    /// `add` for the newest minute, most pushes' (they come nearly in order, several a minute):
    /// its count re-encoded after the bytes before it, copied, where unpacking every minute into
    /// an array and packing them again cost about a thousand instructions a push (callgrind,
    /// PERFORMANCE.md, session 36). The same bytes `init(ordered:)` makes; false, changing
    /// nothing, for another minute or a count that would pass `UInt32.max`.
    private mutating func addToNewest(_ index: Int32, pushes: UInt32) -> Bool {
        guard storedTotal <= UInt32.max - pushes else { return false }
        let made: PackedBytes? = packed.withUnsafeBufferPointer { bytes in
            guard bytes.count >= 6 else { return nil }
            // Read from the end: only a count's last byte is below 128, and a distance (at
            // most `span`) is too, so the newest count begins after the last such byte before it.
            var start = bytes.count - 1
            while bytes[start - 1] & 0x80 != 0 { start -= 1 }
            let oldest = Int32(littleEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(as: Int32.self))
            guard Int64(oldest) + Int64(bytes[start - 1]) == Int64(index) else { return nil }
            var i = start
            let count = Self.readCount(bytes, at: &i)
            guard count <= UInt32.max - pushes else { return nil }
            let total = count + pushes
            return PackedBytes(count: start + Self.lengthOf(total)) { out in
                out.baseAddress!.update(from: bytes.baseAddress!, count: start)
                var i = start
                Self.write(total, into: out, at: &i)
            }
        }
        guard let made else { return false }
        packed = made
        storedTotal += pushes
        return true
    }

    /// The next minute boundary after `t` while `count(at:)` may still change (it is constant
    /// within a minute, and zero from `span` minutes after the newest); nil after that.
    func nextChange(after t: Double) -> Double? {
        guard let (oldest, newest) = bounds else { return nil }
        // Before any time (a table not yet brought to a clock's time): zero until the oldest minute.
        guard t.isFinite else { return t < 0 ? Double(oldest) * 60 : nil }
        let current = Int64(Self.minute(of: t))
        guard current <= Int64(newest) + Int64(Self.span) else { return nil }
        return Double(current + 1) * 60
    }

    /// Priority-10 pushes sent in the hour before `now` (to the minute: see `span`).
    public func count(at now: Double) -> Int {
        let current = Int64(Self.minute(of: now))
        var count = 0
        forEachMinute { m in
            if Int64(m.index) >= current - Int64(Self.span), Int64(m.index) <= current { count += Int(m.pushes) }
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
        bytes.reserveCapacity(1 + packed.count * 4)
        forEachMinute { m in
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
            // Read in place: no array of them is made on the way.
            let stored = (0..<(raw.count / 8)).lazy.map { i in
                Minute(index: Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 1 + i * 8, as: Int32.self)),
                       pushes: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 5 + i * 8, as: UInt32.self)))
            }
            // What `add` leaves (oldest first, within `span` of the newest) is packed as it is:
            // start-up reads a million of these, and `add` one minute at a time cost 2 % of it.
            if let newest = stored.last?.index, Int64(stored.first!.index) >= Int64(newest) - Int64(Self.span),
               zip(stored, stored.dropFirst()).allSatisfy({ $0.index < $1.index }) {
                self = Priority10Minutes(ordered: stored)
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
