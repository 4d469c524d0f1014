import Testing
import SQLiteDB

@Suite struct LifetimeTests {
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
