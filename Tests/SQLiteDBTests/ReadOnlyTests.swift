import Testing
import SQLiteDB

@Suite struct ReadOnlyTests {
    @Test func writesFailOnAReadOnlyConnection() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("ro.sqlite")
        let writer = try Database(path: path)
        try writer.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")

        let reader = try Database(path: path, mode: .readOnly)
        #expect(try reader.scalar("SELECT x FROM t") == 1)
        let insert = #expect(throws: SQLiteError.self) { try reader.run("INSERT INTO t VALUES (2)") }
        #expect(insert?.isReadOnly == true)
        #expect(insert?.code == 8)  // SQLITE_READONLY
        let create = #expect(throws: SQLiteError.self) { try reader.execute("CREATE TABLE u(y)") }
        #expect(create?.isReadOnly == true)
        let transaction = #expect(throws: SQLiteError.self) {
            try reader.transaction { try reader.run("DELETE FROM t") }
        }
        #expect(transaction?.isReadOnly == true)
        #expect(try reader.scalar("SELECT count(*) FROM t") == 1)
        // An up-to-date database needs no write to migrate.
        try writer.setUserVersion(1)
        try reader.migrate(["CREATE TABLE t(x)"])
    }
}
