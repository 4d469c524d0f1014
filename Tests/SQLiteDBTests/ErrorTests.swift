import Testing
import SQLiteDB

@Suite struct ErrorTests {
    static let secret = "tok-5f3a9c-SECRET-do-not-log"

    @Test func constraintViolationCarriesCodesButNoBoundValues() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("e.sqlite"))
        try db.execute("CREATE TABLE tokens(token TEXT PRIMARY KEY, n INTEGER NOT NULL)")
        try db.run("INSERT INTO tokens VALUES (?, 1)", [.text(Self.secret)])
        let unique = #expect(throws: SQLiteError.self) {
            try db.run("INSERT INTO tokens VALUES (?, 2)", [.text(Self.secret)])
        }
        #expect(unique?.isConstraint == true)
        #expect(unique?.code == 19)  // SQLITE_CONSTRAINT
        #expect(unique?.extendedCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(unique?.message.contains("tokens.token") == true)
        #expect(unique?.description.contains("INSERT INTO tokens") == true)
        #expect(unique.map { "\($0)" }?.contains(Self.secret) == false)
        #expect(unique?.isBusy == false && unique?.isDiskFull == false && unique?.isReadOnly == false)

        let notNull = #expect(throws: SQLiteError.self) {
            try db.run("INSERT INTO tokens VALUES (?, ?)", [.text(Self.secret + "2"), .null])
        }
        #expect(notNull?.extendedCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
        #expect(notNull.map { String(describing: $0) }?.contains(Self.secret) == false)
    }

    @Test func syntaxErrorNamesTheProblem() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("e.sqlite"))
        let prepared = #expect(throws: SQLiteError.self) { try db.prepare("SELEC 1") }
        #expect(prepared?.code == 1)  // SQLITE_ERROR
        #expect(prepared?.message.contains("near \"SELEC\": syntax error") == true)

        // execute names the failing statement among several.
        let executed = #expect(throws: SQLiteError.self) {
            try db.execute("CREATE TABLE ok(x); INSERT INTO missing VALUES (1); CREATE TABLE never(y)")
        }
        #expect(executed?.message.contains("no such table: missing") == true)
        #expect(executed?.message.contains("INSERT INTO missing") == true)
        #expect(try db.scalar("SELECT count(*) FROM sqlite_schema WHERE name IN ('ok', 'never')") == 1)
    }

    @Test func executeRunsEveryStatementAroundCommentsAndEmptyOnes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("e.sqlite"))
        try db.execute("""
            ; -- leading separator and comment
            CREATE TABLE a(x); ;
            /* block */ INSERT INTO a VALUES (1);
            PRAGMA user_version = 7; SELECT * FROM a;
            INSERT INTO a VALUES (2) -- no final semicolon
            """)
        #expect(try db.scalar("SELECT count(*) FROM a") == 2)
        #expect(try db.userVersion == 7)
        try db.execute("  -- nothing at all\n")
        try db.execute("")
    }

    @Test func openingAMissingFileReadOnlyFails() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let error = #expect(throws: SQLiteError.self) {
            try Database(path: dir.path("absent.sqlite"), mode: .readOnly)
        }
        #expect(error?.code == 14)  // SQLITE_CANTOPEN
        #expect(error?.message.contains("absent.sqlite") == true)
    }
}
