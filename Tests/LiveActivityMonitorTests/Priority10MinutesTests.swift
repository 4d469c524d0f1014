import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// Priority-10 pushes per activity: the last hour, counted per minute, in bounded space.
@Suite struct Priority10MinutesTests {
    /// 30 s into a minute, so that the window's edges fall inside minutes.
    let now = (TestServer.base / 60).rounded(.down) * 60 + 30

    @Test func countsTheLastHourToTheMinute() {
        var w = Priority10Minutes()
        w.record(now - 3599)           // inside the exact hour
        w.record(now - 3629)           // 60 minutes back, in the minute the window starts with
        w.record(now - 3631)           // 61 minutes back: out
        w.record(now)
        #expect(w.count(at: now) == 3)
        #expect(w.count(at: now + 60) == 1, "a minute later, the minute that was 60 back has left")
        #expect(w.count(at: now + 3 * 3600) == 0)

        var ahead = Priority10Minutes()
        ahead.record(now)
        ahead.record(now + 60)         // reported ahead of the clock: counted once its minute comes
        #expect(ahead.count(at: now) == 1)
        #expect(ahead.count(at: now + 60) == 2)
    }

    @Test func outOfOrderPushesLandInTheirMinute() {
        var w = Priority10Minutes()
        for t in [now, now - 600, now - 5, now - 1200, now - 601] { w.record(t) }
        #expect(w.minutes.map(\.index) == w.minutes.map(\.index).sorted())
        // Minutes N-20, N-10 (now - 600 and now - 601) and N (now and now - 5).
        #expect(w.minutes.map(\.pushes) == [1, 2, 2], "\(w.minutes)")
        #expect(w.count(at: now) == 5)
        #expect(w.total == 5)
    }

    @Test func staysBoundedWhateverTheRate() {
        var w = Priority10Minutes()
        // Every GPS fix at priority 10, one every 2 s, for three hours.
        for i in 0..<5400 { w.record(now - 3 * 3600 + Double(i) * 2) }
        #expect(w.minutes.count <= 61)
        #expect(w.total == w.minutes.reduce(0) { $0 + Int($1.pushes) })
        #expect(w.count(at: now) == 30 * 60 + 15, "60 whole minutes and the half of the current one")
        #expect(w.blob.count <= 1 + 61 * 8)
        // A push older than the newest minute's window is dropped rather than kept.
        w.record(now - 5 * 3600)
        #expect(w.minutes.count <= 61)
        #expect(w.count(at: now) == 30 * 60 + 15)
    }

    @Test func storedFormRoundTripsAndOlderFormsStillRead() {
        var w = Priority10Minutes()
        for t in [now - 3000, now - 2999, now - 100, now] { w.record(t) }
        #expect(Priority10Minutes(blob: w.blob) == w)
        #expect(w.blob.first == Priority10Minutes.blobVersion && w.blob.count == 1 + 3 * 8)
        #expect(Priority10Minutes(blob: []) == Priority10Minutes())
        #expect(Priority10Minutes(blob: Priority10Minutes().blob) == Priority10Minutes())

        // Earlier versions stored the send times: 8-byte little-endian doubles, or decimal text.
        let times = [now - 3000, now - 2999, now - 100, now]
        var doubles = [UInt8]()
        for t in times { withUnsafeBytes(of: t.bitPattern.littleEndian) { doubles.append(contentsOf: $0) } }
        #expect(Priority10Minutes(blob: doubles) == w)
        #expect(Priority10Minutes(text: times.map { String($0) }.joined(separator: ",")) == w)
        #expect(Priority10Minutes(text: "") == Priority10Minutes())
    }

    /// The packed minutes against a plain model of the window (minute → pushes, the newest's
    /// hour kept): random pushes in and out of order, counts that take one to three bytes
    /// packed, the total, the count at each minute around them, and the stored form.
    @Test(arguments: [1, 2, 3, 4, 5])
    func packedMinutesAreTheWindowsMinutes(seed: UInt64) {
        var random = PushEventScannerTests.Seeded(state: seed)
        var w = Priority10Minutes()
        var model: [Int32: UInt64] = [:]
        let start = Priority10Minutes.minute(of: now)
        for step in 0..<400 {
            let index = start + Int32(Int.random(in: 0...(step / 2), using: &random)) - 30
            let pushes = [1, 1, 1, 127, 128, 16_383, 16_384, 70_000].randomElement(using: &random)!
            // Large counts arrive as a stored form would bring them: through its minutes added.
            var blob = w.blob
            withUnsafeBytes(of: index.littleEndian) { blob.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(pushes).littleEndian) { blob.append(contentsOf: $0) }
            w = Priority10Minutes(blob: blob)
            if let newest = model.keys.max(), index < newest - 60 { continue }
            model[index, default: 0] += UInt64(pushes)
            let newest = model.keys.max()!
            model = model.filter { $0.key >= newest - 60 }
            #expect(w.minutes.map(\.index) == model.keys.sorted(), "step \(step)")
            #expect(w.minutes.map { UInt64($0.pushes) } == model.keys.sorted().map { model[$0]! })
            #expect(UInt64(w.total) == model.values.reduce(0, +))
            #expect(Priority10Minutes(blob: w.blob) == w)
        }
        for minute in (start - 100)...(start + 300) {
            let expected = model.filter { $0.key <= minute && $0.key >= minute - 60 }.values.reduce(0, +)
            #expect(UInt64(w.count(at: Double(minute) * 60 + 1)) == expected, "minute \(minute)")
        }
    }

    /// Pushes one at a time, mostly to the newest minute (re-encoded in place of unpacking:
    /// `addToNewest`), against the same model: counts crossing each byte length of LEB128, and
    /// the bytes equal to those the minutes packed afresh make (`==` compares them).
    @Test(arguments: [1, 2, 3])
    func pushesToTheNewestMinuteKeepTheWindow(seed: UInt64) {
        var random = PushEventScannerTests.Seeded(state: seed)
        var w = Priority10Minutes()
        var model: [Int32: UInt64] = [:]
        var index = Priority10Minutes.minute(of: now)
        for step in 0..<20_000 {
            // Now and then the next minute, or one behind (a push reported late).
            switch Int.random(in: 0..<1000, using: &random) {
            case 0..<3: index += 1
            case 3: index -= Int32.random(in: 1...70, using: &random)
            case 4: index += Int32.random(in: 2...70, using: &random)
            default: break
            }
            w.record(Double(index) * 60 + Double.random(in: 0..<60, using: &random))
            if let newest = model.keys.max(), index < newest - 60 { continue }
            model[index, default: 0] += 1
            let newest = model.keys.max()!
            model = model.filter { $0.key >= newest - 60 }
            if step % 97 == 0 || step > 19_900 {
                #expect(w.minutes.map(\.index) == model.keys.sorted(), "step \(step)")
                #expect(w.minutes.map { UInt64($0.pushes) } == model.keys.sorted().map { model[$0]! }, "step \(step)")
                #expect(UInt64(w.total) == model.values.reduce(0, +))
                #expect(Priority10Minutes(blob: w.blob) == w, "step \(step)")
            }
        }
        #expect(model.values.contains { $0 >= 128 }, "a minute's count takes two bytes")
    }

    /// A stored form that `add` would not have left (out of order, a repeated minute, minutes
    /// out of the newest's window: another writer, or a damaged row) reads as those minutes added
    /// one by one, not as it is.
    @Test func anUnorderedStoredFormReadsAsItsMinutesAdded() {
        let pairs: [(Int32, UInt32)] = [(Int32.min, 1), (100, 2), (40, 1), (100, 3), (170, 1), (99, 4), (Int32.min, 1), (Int32.max, 1)]
        var blob = [Priority10Minutes.blobVersion]
        var added = Priority10Minutes()
        for (count, (index, pushes)) in pairs.enumerated() {
            withUnsafeBytes(of: index.littleEndian) { blob.append(contentsOf: $0) }
            withUnsafeBytes(of: pushes.littleEndian) { blob.append(contentsOf: $0) }
            for _ in 0..<pushes { added.record(Double(index) * 60 + 1) }
            #expect(Priority10Minutes(blob: blob) == added, "after \(count + 1) stored minutes")
        }
    }

    /// A database written before migration 3 holds send times as 8-byte doubles: it upgrades,
    /// reads them, and writes the new form at the activity's next change.
    @Test func versionTwoDatabasesUpgrade() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/db.sqlite"
        do {
            let db = try Database(path: path)
            try db.migrate(Array(Schema.migrations.prefix(2)))
            var doubles = [UInt8]()
            for t in [now - 300, now - 200.5] { withUnsafeBytes(of: t.bitPattern.littleEndian) { doubles.append(contentsOf: $0) } }
            try db.run("""
                INSERT INTO activities (activity_id, booking_id, attributes_type, source, started_at, content_timestamp,
                                        reported_stale, stale_counted, token_rotations, priority10_times)
                VALUES ('a', 'BK-a', 'TimerWidgetAttributes', 'app', ?1, ?1, 0, 0, 0, ?2)
                """, [.real(now - 600), .blob(doubles)])
        }
        let store = try EventStore(path: path, clock: Clock.manual(now).0)
        #expect(try store.record("a")?.priority10Count(at: now) == 2)
        let push = try #require(try IngestDecoder().decode(
            Array(Scenario.push("a", "p", at: now - 1, token: IngestTests.token).jsonString.utf8), format: .json).first)
        _ = store.ingest([push])
        #expect(try store.record("a")?.priority10Count(at: now) == 3)
        store.close()
        let db = try Database(path: path)
        #expect(try db.userVersion == Schema.migrations.count, "upgraded to the current version")
        #expect(try db.scalar("SELECT length(priority10_times) FROM activities") == .integer(1 + 3 * 8), "three minutes")
    }

    /// Through the real server: a storm of priority-10 pushes leaves a small row, counted in
    /// the read API and the heavy gauge, and the count survives a restart.
    @Test func aStormKeepsTheRowSmallAndIsCounted() throws {
        let server = try TestServer(now: now)
        defer { server.stop() }
        _ = try server.post(events: [IngestTests.started("storm", at: now - 4000)])
        let pushes = (0..<1800).map { i in
            Scenario.push("storm", "p\(i)", at: now - 3600 + Double(i) * 2, token: IngestTests.token)
        }
        for chunk in stride(from: 0, to: pushes.count, by: 600) {
            #expect(try server.post(events: Array(pushes[chunk..<chunk + 600])).status == 200)
        }
        let expected = 1800
        #expect(try server.json("/api/activities/storm")["priority10_last_hour"]?.int64Value == Int64(expected))
        #expect(try server.metric("liveactivity_priority10_heavy_activities") == 1)

        server.server.store.catchUp()   // a live activity's row is written about four times a second
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        let size = try db.scalar("SELECT length(priority10_times) FROM activities WHERE activity_id = 'storm'")
        #expect(size == .integer(1 + 61 * 8) || size == .integer(1 + 60 * 8), "\(String(describing: size))")

        try server.restart()
        #expect(try server.json("/api/activities/storm")["priority10_last_hour"]?.int64Value == Int64(expected))
    }
}
