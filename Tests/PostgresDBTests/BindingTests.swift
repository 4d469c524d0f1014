import PostgresDB
import Testing
import TestSupport

/// Values go through parameters, never SQL text, and come back as they went in.
@Suite struct BindingTests {
    @Test func hostileStringsRoundTripAsValues() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (id bigserial PRIMARY KEY, s text)")
        let hostile = [
            "'; DROP TABLE t; --", "\"quoted\"", "back\\slash", "$1", "$$ dollar $$", "line\nbreak\ttab",
            "emoji 🚀 and é", "", " ", "{\"json\": [1, 2]}", "NULL", "\u{7F}\u{1}",
        ]
        for text in hostile {
            try db.prepared("INSERT INTO t (s) VALUES ($1)", [.text(text)])
        }
        let back = try db.query("SELECT s FROM t ORDER BY id").rows.map { $0[0].textValue }
        #expect(back == hostile)
        #expect(try db.scalar("SELECT count(*) FROM t") == .integer(Int64(hostile.count)))
        // The same text in a one-off statement, and as an array element.
        #expect(try db.scalar("SELECT $1::text", ["'; DROP TABLE t; --"]) == .text("'; DROP TABLE t; --"))
        let array = try db.query("SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, n) ORDER BY n",
                                 [try .array(hostile.map { .text($0) } + [.null])])
        #expect(array.rows.map(\.[0]) == hostile.map { .text($0) } + [.null])
    }

    @Test func aNULCharacterIsRefusedNotTruncated() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        #expect {
            try db.query("SELECT $1::text", [.text("before\u{0}after")])
        } throws: { ($0 as? PostgresError)?.sqlState == "22021" }
        // The connection is still usable.
        #expect(try db.scalar("SELECT 1::bigint") == .integer(1))
    }

    @Test func nullsOfEveryType() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (i bigint, d double precision, s text, b bytea, f boolean)")
        try db.query("INSERT INTO t VALUES ($1, $2, $3, $4, $5)", [.null, .null, .null, .null, .null])
        let row = try #require(try db.query("SELECT i, d, s, b, f FROM t").rows.first)
        #expect(row == [.null, .null, .null, .null, .null])
        #expect(try db.scalar("SELECT count(*) FROM t WHERE i IS NULL AND s IS NULL") == .integer(1))
        // An empty string and empty bytes are not NULL.
        try db.query("INSERT INTO t (s, b) VALUES ($1, $2)", [.text(""), .bytes([])])
        let empty = try db.query("SELECT s, b FROM t WHERE s IS NOT NULL").rows
        #expect(empty == [[.text(""), .bytes([])]])
    }

    @Test func int64ExtremesAndDoubles() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (n int, i bigint, d double precision)")
        let integers: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
        let doubles: [Double] = [0, -0.0, 1.5, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1_764_000_000.123456, .infinity, -.infinity]
        for (n, (integer, double)) in zip(integers + integers, doubles).enumerated() {
            try db.prepared("INSERT INTO t VALUES ($1, $2, $3)", [.integer(Int64(n)), .integer(integer), .real(double)])
        }
        let rows = try db.query("SELECT i, d FROM t ORDER BY n").rows
        #expect(rows.map(\.[0]) == zip(integers + integers, doubles).map { .integer($0.0) })
        #expect(rows.map { $0[1].doubleValue! } == doubles)
        #expect(try db.scalar("SELECT 'NaN'::double precision")?.doubleValue?.isNaN == true)
        #expect(try db.scalar("SELECT $1::double precision", [.real(.nan)])?.doubleValue?.isNaN == true)
        // Out of range for the column: the server's error, not a wrapped value.
        #expect {
            try db.query("INSERT INTO t (n) VALUES ($1)", [.integer(Int64(Int32.max) + 1)])
        } throws: { ($0 as? PostgresError)?.sqlState == "22003" }
    }

    @Test func bytesAndBooleans() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        let bytes: [UInt8] = Array(0...255)
        #expect(try db.scalar("SELECT $1::bytea", [.bytes(bytes)]) == .bytes(bytes))
        #expect(try db.scalar("SELECT length($1::bytea)::bigint", [.bytes([0, 0, 0])]) == .integer(3))
        #expect(try db.query("SELECT $1::boolean, $2::boolean", [true, false]).rows == [[.boolean(true), .boolean(false)]])
    }

    @Test func affectedRowsAndColumns() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (k text PRIMARY KEY, v bigint)")
        let inserted = try db.query("INSERT INTO t SELECT * FROM unnest($1::text[], $2::bigint[])",
                                    [try .array(["a", "b", "c"]), try .array([1, 2, .null])])
        #expect(inserted.affectedRows == 3)
        #expect(try db.query("INSERT INTO t VALUES ('a', 9) ON CONFLICT DO NOTHING").affectedRows == 0)
        let result = try db.query("SELECT k AS key, v FROM t ORDER BY k")
        #expect(result.columns == ["key", "v"])
        #expect(result.rows == [[.text("a"), .integer(1)], [.text("b"), .integer(2)], [.text("c"), .null]])
        #expect(try db.query("UPDATE t SET v = 0 WHERE v IS NOT NULL").affectedRows == 2)
    }

    @Test func preparedStatementsAreReusedAndSurviveErrors() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (k bigint PRIMARY KEY)")
        for k in 1...50 { try db.prepared("INSERT INTO t VALUES ($1)", [.integer(Int64(k))]) }
        #expect(try db.scalar("SELECT count(*) FROM pg_prepared_statements") == .integer(1))
        #expect(throws: PostgresError.self) { try db.prepared("INSERT INTO t VALUES ($1)", [1]) }
        try db.prepared("INSERT INTO t VALUES ($1)", [51])
        #expect(try db.scalar("SELECT max(k) FROM t") == .integer(51))
    }
}
