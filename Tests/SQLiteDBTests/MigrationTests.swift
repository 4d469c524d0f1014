import Testing
import SQLiteDB

@Suite struct MigrationTests {
    static let steps: [Migration] = [
        "CREATE TABLE a(x INTEGER NOT NULL)",
        "CREATE TABLE b(y TEXT); INSERT INTO a(x) VALUES (1)",
        "ALTER TABLE b ADD COLUMN z BLOB; CREATE INDEX b_y ON b(y)",
    ]

    @Test func freshDatabaseMigratesToLatest() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("m.sqlite"))
        #expect(try db.userVersion == 0)
        try db.migrate(Self.steps)
        #expect(try db.userVersion == 3)
        #expect(try db.scalar("SELECT count(*) FROM a") == 1)
        try db.run("INSERT INTO b(y, z) VALUES ('y', x'00')")
        #expect(db.isInTransaction == false)
    }

    @Test func reopeningSkipsAppliedSteps() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("m.sqlite")
        try Database(path: path).migrate(Array(Self.steps.prefix(2)))
        let db = try Database(path: path)
        #expect(try db.userVersion == 2)
        // Rerunning step 1 would insert a second row into a, and step 0 would fail outright.
        try db.migrate(Self.steps)
        try db.migrate(Self.steps)
        #expect(try db.userVersion == 3)
        #expect(try db.scalar("SELECT count(*) FROM a") == 1)
    }

    @Test func failingStepRollsBackAndKeepsVersion() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("m.sqlite"))
        let broken: [Migration] = [
            Self.steps[0],
            "INSERT INTO a(x) VALUES (7); CREATE TABLE c(w); INSERT INTO no_such_table VALUES (1)",
        ]
        let error = #expect(throws: SQLiteError.self) { try db.migrate(broken) }
        #expect(error?.message.contains("migration step 1") == true)
        #expect(error?.message.contains("no_such_table") == true)
        #expect(try db.userVersion == 1)
        #expect(try db.scalar("SELECT count(*) FROM a") == 0)
        #expect(try db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'c'") == 0)
        #expect(db.isInTransaction == false)
    }

    @Test func codeStepRunsInsideTheStepsTransaction() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("m.sqlite"))
        let doubling: Migration = .code { db throws(SQLiteError) in
            let values = try db.query("SELECT x FROM a").compactMap { $0[0].int64Value }
            try db.run("DELETE FROM a")
            for value in values { try db.run("INSERT INTO a(x) VALUES (?)", [.integer(value * 2)]) }
        }
        try db.migrate(Array(Self.steps.prefix(2)) + [doubling])
        #expect(try db.userVersion == 3)
        #expect(try db.scalar("SELECT x FROM a") == 2)

        // A code step that throws leaves neither its writes nor the version bump.
        let failing: Migration = .code { db throws(SQLiteError) in
            try db.run("INSERT INTO a(x) VALUES (9)")
            try db.run("INSERT INTO no_such_table VALUES (1)")
        }
        let error = #expect(throws: SQLiteError.self) { try db.migrate(Array(Self.steps.prefix(2)) + [doubling, failing]) }
        #expect(error?.message.contains("migration step 3") == true)
        #expect(try db.userVersion == 3)
        #expect(try db.scalar("SELECT count(*) FROM a") == 1)
        #expect(db.isInTransaction == false)
    }

    @Test func databaseNewerThanCodeThrows() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("m.sqlite"))
        try db.migrate(Self.steps)
        let error = #expect(throws: SQLiteError.self) { try db.migrate(Array(Self.steps.prefix(2))) }
        #expect(error?.message.contains("schema version 3") == true)
        #expect(error?.message.contains("newer") == true)
        #expect(try db.userVersion == 3)
    }

    @Test func pendingMigrationsCountsWithoutApplyingAndRefusesANewerDatabase() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("p.sqlite"))
        #expect(try db.pendingMigrations(Self.steps) == Self.steps.count)
        try db.migrate(Array(Self.steps.prefix(1)))
        #expect(try db.pendingMigrations(Self.steps) == Self.steps.count - 1)
        #expect(try db.userVersion == 1)
        try db.migrate(Self.steps)
        #expect(try db.pendingMigrations(Self.steps) == 0)
        let error = #expect(throws: SQLiteError.self) { try db.pendingMigrations(Array(Self.steps.prefix(2))) }
        #expect(error?.message.contains("schema version 3 but this program knows only 2") == true)
        #expect(error?.message.contains("newer") == true)
    }

    @Test func userVersionRoundTripsAndRejectsOutOfRange() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("v.sqlite"))
        try db.setUserVersion(41)
        #expect(try db.userVersion == 41)
        let error = #expect(throws: SQLiteError.self) { try db.setUserVersion(Int(Int32.max) + 1) }
        #expect(error?.code == 25)  // SQLITE_RANGE
        #expect(try db.userVersion == 41)
    }
}
