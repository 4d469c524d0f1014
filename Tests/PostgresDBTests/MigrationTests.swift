import PostgresDB
import Testing
import TestSupport

@Suite struct MigrationTests {
    static let steps: [PostgresMigration] = [
        "CREATE TABLE a (k bigint PRIMARY KEY); CREATE TABLE b (k bigint)",
        .code { db in try db.query("INSERT INTO a VALUES ($1)", [7]) },
        "ALTER TABLE b ADD COLUMN note text",
    ]

    @Test func migrationsApplyOnceAndAreIdempotent() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        #expect(try db.schemaVersion() == 0)
        #expect(try db.pendingMigrations(Self.steps) == 3)
        try db.migrate(Self.steps)
        #expect(try db.schemaVersion() == 3)
        try db.migrate(Self.steps)
        try db.migrate(Self.steps)
        #expect(try db.scalar("SELECT count(*) FROM a") == .integer(1))
        #expect(try db.scalar("SELECT count(*) FROM schema_migrations") == .integer(3))
        #expect(try db.pendingMigrations(Self.steps) == 0)
    }

    @Test func aFailingStepLeavesNoTraceAndTheVersionWhereItWas() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        let failing = Array(Self.steps.prefix(2)) + ["CREATE TABLE c (k bigint); SELECT no_such_column FROM a"]
        let error = try #require(throws: PostgresError.self) { try db.migrate(failing) }
        #expect(error.message.contains("migration step 2"))
        #expect(try db.schemaVersion() == 2)
        #expect(try db.scalar("SELECT to_regclass('c') IS NULL") == .boolean(true))
        try db.migrate(Self.steps)
        #expect(try db.schemaVersion() == 3)
    }

    @Test func aNewerDatabaseIsRefused() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.migrate(Self.steps)
        #expect(throws: PostgresError.self) { try db.migrate(Array(Self.steps.prefix(2))) }
        #expect(throws: PostgresError.self) { try db.pendingMigrations(Array(Self.steps.prefix(1))) }
    }

    @Test func twoConnectionsMigratingAtOnceApplyEachStepOnce() async throws {
        let uri = try PostgresCluster.database()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { try PostgresConnection(uri: uri).migrate(Self.steps) }
            }
            try await group.waitForAll()
        }
        let db = try PostgresConnection(uri: uri)
        #expect(try db.scalar("SELECT count(*) FROM a") == .integer(1))
        #expect(try db.schemaVersion() == 3)
    }
}
