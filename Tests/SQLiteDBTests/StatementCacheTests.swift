import Testing
import SQLiteDB

@Suite struct StatementCacheTests {
    @Test func cachedStatementsAreReusedAndReset() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("c.sqlite"))
        let first = try db.cached("SELECT ?1, ?2")
        try first.bind("leaked?", at: 1)
        try first.bind(5, at: 2)
        #expect(try first.step())
        #expect(first.text(0) == "leaked?")
        // Taken again mid-row: same object, bindings cleared, back at the start.
        let second = try db.cached("SELECT ?1, ?2")
        #expect(first === second)
        #expect(try second.step())
        #expect(second.value(0) == .null && second.value(1) == .null)
        #expect(try db.cached("SELECT ?1, ?3") !== first)
        #expect(try db.prepare("SELECT ?1, ?2") !== first)
    }

    @Test func helpersShareTheCacheWithoutLeakingBindings() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("c.sqlite"))
        try db.execute("CREATE TABLE t(a, b)")
        let sql = "INSERT INTO t(a, b) VALUES (?, ?)"
        try db.run(sql, [1, "one"])
        // A binding count that does not match the parameters is refused, not padded with NULL.
        let error = #expect(throws: SQLiteError.self) { try db.run(sql, [2]) }
        #expect(error?.code == 25)  // SQLITE_RANGE
        let statement = try db.cached(sql)
        #expect(try statement.step() == false)
        #expect(try db.query("SELECT a, b FROM t ORDER BY rowid") == [[1, "one"], [.null, .null]])
    }

    @Test func helpersReleaseTheirReadSoCheckpointsCanFinish() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("c.sqlite"), busyTimeoutMilliseconds: 50)
        try db.enableWAL()
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)")
        // scalar stops after one of three rows: it must still reset, ending its read.
        #expect(try db.scalar("SELECT x FROM t ORDER BY x") == 1)
        let writer = try Database(path: dir.path("c.sqlite"), busyTimeoutMilliseconds: 50)
        try writer.run("INSERT INTO t VALUES (4)")
        try writer.checkpoint(truncate: true)
    }

    @Test func prepareRejectsEmptyAndMultipleStatements() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("c.sqlite"))
        #expect(throws: SQLiteError.self) { try db.prepare("  -- nothing\n") }
        #expect(throws: SQLiteError.self) { try db.prepare("SELECT 1; SELECT 2") }
        // Trailing separators and comments are fine.
        #expect(try db.prepare("SELECT 1; -- done\n").step())
    }

    @Test func bindIndexOutOfRangeThrows() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("c.sqlite"))
        let statement = try db.prepare("SELECT ?")
        #expect(statement.parameterCount == 1)
        let error = #expect(throws: SQLiteError.self) { try statement.bind(1, at: 2) }
        #expect(error?.code == 25)  // SQLITE_RANGE
        #expect(error?.message.contains("parameter 2") == true)
    }
}
