import Testing
import SQLiteDB

@Suite struct TransactionTests {
    struct Abort: Error {}

    @Test func commitsOnReturn() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("t.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(x)")
        let count = try db.transaction {
            #expect(db.isInTransaction)
            for i in 0..<3 { try db.run("INSERT INTO t VALUES (?)", [SQLiteValue(i)]) }
            return try db.scalar("SELECT count(*) FROM t")
        }
        #expect(count == 3)
        #expect(db.isInTransaction == false)
        // Committed: another connection sees the rows.
        #expect(try Database(path: path).scalar("SELECT count(*) FROM t") == 3)
    }

    @Test(arguments: [Database.TransactionKind.deferred, .immediate])
    func rollsBackOnThrowAndRethrowsTheOriginalError(kind: Database.TransactionKind) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("t.sqlite"))
        try db.execute("CREATE TABLE t(x)")
        try db.run("INSERT INTO t VALUES ('kept')")
        #expect(throws: Abort.self) {
            try db.transaction(kind) {
                try db.run("INSERT INTO t VALUES ('gone')")
                try db.run("DELETE FROM t WHERE x = 'kept'")
                throw Abort()
            }
        }
        #expect(db.isInTransaction == false)
        #expect(try db.query("SELECT x FROM t") == [["kept"]])
    }

    @Test func sqliteErrorInsideRollsBack() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("t.sqlite"))
        try db.execute("CREATE TABLE t(x UNIQUE)")
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (1)")
                try db.run("INSERT INTO t VALUES (1)")
            }
        }
        #expect(error?.isConstraint == true)
        #expect(db.isInTransaction == false)
        #expect(try db.scalar("SELECT count(*) FROM t") == 0)
        #expect(db.isInTransaction == false)
        // The connection is usable for the next transaction.
        try db.transaction { try db.run("INSERT INTO t VALUES (2)") }
        #expect(try db.scalar("SELECT count(*) FROM t") == 1)
    }
}
