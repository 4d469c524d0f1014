import Testing
import SQLiteDB

@Suite struct DiskFullTests {
    @Test func fullDatabaseStillReadsAndRecovers() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("full.sqlite"))
        try db.enableWAL()
        try db.execute("CREATE TABLE t(x BLOB)")
        let pages = try #require(try db.scalar("PRAGMA page_count")?.int64Value)
        // A few pages of headroom: max_page_count is this connection's stand-in for a full disk.
        try db.execute("PRAGMA max_page_count = \(pages + 8)")

        var inserted = 0
        var failure: SQLiteError?
        while failure == nil && inserted < 1000 {
            do throws(SQLiteError) {
                try db.run("INSERT INTO t VALUES (zeroblob(1000))")
                inserted += 1
            } catch {
                failure = error
            }
        }
        let full = try #require(failure)
        #expect(full.isDiskFull)
        #expect(full.code == 13)  // SQLITE_FULL
        #expect(inserted > 0)

        #expect(try db.scalar("SELECT count(*) FROM t") == .integer(Int64(inserted)))
        try db.execute("PRAGMA max_page_count = 1000000")
        try db.run("INSERT INTO t VALUES (zeroblob(1000))")
        #expect(try db.scalar("SELECT count(*) FROM t") == .integer(Int64(inserted + 1)))
    }

    @Test func fullInsideATransactionRollsBack() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("full.sqlite"))
        try db.execute("CREATE TABLE t(x BLOB); INSERT INTO t VALUES (1)")
        let pages = try #require(try db.scalar("PRAGMA page_count")?.int64Value)
        try db.execute("PRAGMA max_page_count = \(pages + 4)")
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction {
                for _ in 0..<100 { try db.run("INSERT INTO t VALUES (zeroblob(2000))") }
            }
        }
        #expect(error?.isDiskFull == true)
        #expect(db.isInTransaction == false)
        #expect(try db.scalar("SELECT count(*) FROM t") == 1)
    }
}
