import Testing
import SQLiteDB
import CSQLite3

@Suite struct LifetimeTests {
    /// `Database` turns SQLite's memory statistics off before its first connection: kept, they
    /// take a process-wide mutex around every allocation. Had the setting come too late (SQLite
    /// already started), the statistics would count this connection's memory.
    @Test func sqliteKeepsNoMemoryStatistics() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("m.sqlite"))
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(100000))")
        #expect(sqlite3_memory_used() == 0)
    }

    @Test func statementOutlivesItsDatabase() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var db: Database? = try Database(path: dir.path("l.sqlite"))
        try db?.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('still here')")
        let statement = try #require(try db?.prepare("SELECT x FROM t"))
        db = nil
        // The statement keeps the connection open until it goes itself.
        #expect(try statement.step())
        #expect(statement.text(0) == "still here")
    }

    @Test func droppingTheDatabaseClosesTheConnection() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("l.sqlite")
        var writer: Database? = try Database(path: path, busyTimeoutMilliseconds: 0)
        try writer?.execute("CREATE TABLE t(x)")
        _ = try writer?.cached("SELECT x FROM t")
        try writer?.run("BEGIN IMMEDIATE")
        // While the writer's transaction is open nobody else can write...
        let other = try Database(path: path, busyTimeoutMilliseconds: 0)
        let busy = #expect(throws: SQLiteError.self) { try other.run("INSERT INTO t VALUES (1)") }
        #expect(busy?.isBusy == true)
        // ...and closing the connection (cached statements included) ends it.
        writer = nil
        try other.run("INSERT INTO t VALUES (1)")
        #expect(try other.scalar("SELECT count(*) FROM t") == 1)
    }
}
