import Testing
import SQLiteDB

@Suite struct RoundTripTests {
    /// Every storage class, with the edge cases each has.
    static let values: [SQLiteValue] = [
        .null,
        .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .real(0), .real(-1.5), .real(Double.greatestFiniteMagnitude), .real(Double.leastNonzeroMagnitude),
        .real(.infinity), .real(-.infinity),
        .text(""), .text("plain"), .text("héllo wörld 🌍 日本語"), .text("nul\u{0}inside"),
        .text(String(repeating: "long text ", count: 10_000)),
        .blob([]), .blob([0, 1, 2, 254, 255]), .blob((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
    ]

    @Test func enumBindingsRoundTrip() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("values.sqlite"))
        // No declared type: no affinity, so every value is stored exactly as bound.
        try db.execute("CREATE TABLE v(id INTEGER PRIMARY KEY, x)")
        for (id, value) in Self.values.enumerated() {
            try db.run("INSERT INTO v(id, x) VALUES (?, ?)", [.integer(Int64(id)), value])
            #expect(db.changes == 1)
            #expect(db.lastInsertRowID == Int64(id))
        }
        let rows = try db.query("SELECT x FROM v ORDER BY id")
        #expect(rows.map { $0[0] } == Self.values)
        for (id, value) in Self.values.enumerated() {
            #expect(try db.scalar("SELECT x FROM v WHERE id = ?", [.integer(Int64(id))]) == value)
        }
        #expect(try db.scalar("SELECT x FROM v WHERE id = -1") == nil)
    }

    @Test func typedBindsAndGettersRoundTrip() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("typed.sqlite"))
        try db.execute("CREATE TABLE t(i, r, s, b, n)")
        let insert = try db.prepare("INSERT INTO t(i, r, s, b, n) VALUES (?, ?, ?, ?, ?)")
        let rows: [(Int64, Double, String?, [UInt8]?)] = [
            (Int64.min, -0.25, "", []),
            (Int64.max, 1e300, "ünïcødé ✓", [9, 8, 7]),
            (0, 0, nil, nil),
        ]
        for (integer, real, text, bytes) in rows {
            try insert.bind(integer, at: 1)
            try insert.bind(real, at: 2)
            try insert.bind(text, at: 3)
            try insert.bind(bytes, at: 4)
            try insert.bindNull(at: 5)
            #expect(try insert.step() == false)
            insert.reset()
        }

        let select = try db.prepare("SELECT i, r, s, b, n, typeof(s), typeof(b) FROM t ORDER BY rowid")
        #expect(select.columnCount == 7)
        #expect(select.columnNames == ["i", "r", "s", "b", "n", "typeof(s)", "typeof(b)"])
        for (integer, real, text, bytes) in rows {
            #expect(try select.step())
            #expect(select.int64(0) == integer)
            #expect(select.double(1) == real)
            #expect(select.text(2) == text)
            #expect(select.blob(3) == bytes)
            #expect(select.isNull(4))
            #expect(select.text(4) == nil)
            #expect(select.blob(4) == nil)
            // Empty text and empty blob keep their type rather than becoming NULL.
            #expect(select.text(5) == (text == nil ? "null" : "text"))
            #expect(select.text(6) == (bytes == nil ? "null" : "blob"))
        }
        #expect(try select.step() == false)
    }

    /// Text lent for one step (`withText`), from a String or from UTF-8 bytes, is stored as the
    /// text a copy would store, as text, empty text included; and the statement holds no binding
    /// of it afterwards, even though SQLite refuses to unbind a statement stepped since its last
    /// reset: a step without it stores NULL, where it would read the lent bytes after they had gone.
    @Test func textLentForAStepIsStoredAndLetGo() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("lent.sqlite"))
        try db.execute("CREATE TABLE t(n, s)")
        let insert = try db.prepare("INSERT INTO t(n, s) VALUES (?, ?)")
        let texts = ["", "plain", "ünïcødé ✓ 🌍", String(repeating: "long ", count: 5_000)]
        for (n, text) in texts.enumerated() {
            try insert.bind(Int64(n), at: 1)
            let lent = n % 2 == 0 ? try insert.withText(text, at: 2) { try insert.step() }
                : try insert.withText(utf8: Array(text.utf8), at: 2) { try insert.step() }
            #expect(lent == false)
            try insert.bind(Int64(n), at: 1)
            #expect(try insert.step() == false)
            insert.reset()
        }
        let rows = try db.query("SELECT n, s FROM t ORDER BY rowid")
        #expect(rows == texts.indices.flatMap { n in [[.integer(Int64(n)), .text(texts[n])], [.integer(Int64(n)), .null]] })
        #expect(try db.query("SELECT typeof(s) FROM t WHERE s IS NOT NULL").allSatisfy { $0[0] == .text("text") })
    }

    @Test func literalsAndAccessors() {
        let values: [SQLiteValue] = [.null, 42, 2.5, "x"]
        #expect(values == [.null, .integer(42), .real(2.5), .text("x")])
        #expect(values[0].isNull)
        #expect(values[1].int64Value == 42 && values[1].textValue == nil)
        #expect(values[2].doubleValue == 2.5)
        #expect(SQLiteValue(nil as String?) == .null && SQLiteValue(7) == .integer(7))
        #expect(SQLiteValue.blob([1]).blobValue == [1])
    }
}
