import PostgresDB
import Testing
import TestSupport

@Suite struct ErrorAndTransactionTests {
    @Test func constraintViolationCarriesItsSQLState() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (k text CONSTRAINT t_key PRIMARY KEY, n bigint NOT NULL)")
        try db.query("INSERT INTO t VALUES ($1, 1)", ["secret-value"])
        let error = try #require(throws: PostgresError.self) {
            try db.query("INSERT INTO t VALUES ($1, 2)", ["secret-value"])
        }
        #expect(error.sqlState == "23505")
        #expect(error.isUniqueViolation && error.isConstraint)
        #expect(error.constraint == "t_key")
        // The message names the statement, never the bound value (the server's DETAIL has it).
        #expect(!error.description.contains("secret-value"))
        #expect(error.description.contains("INSERT INTO t"))
        let notNull = try #require(throws: PostgresError.self) { try db.query("INSERT INTO t VALUES ('x', $1)", [.null]) }
        #expect(notNull.sqlState == "23502")
        let syntax = try #require(throws: PostgresError.self) { try db.execute("SELEC 1") }
        #expect(syntax.sqlState == "42601")
    }

    @Test func aThrowingBodyRollsBack() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (k bigint PRIMARY KEY)")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.transaction {
                try db.query("INSERT INTO t VALUES (1)")
                throw Stop()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try db.scalar("SELECT count(*) FROM t") == .integer(0))
        let n = try db.transaction { () throws -> Int in
            try db.query("INSERT INTO t VALUES (1), (2)").affectedRows
        }
        #expect(n == 2)
        #expect(try db.scalar("SELECT count(*) FROM t") == .integer(2))
    }

    @Test func aFailedStatementIsNeverCommittedEvenIfCaught() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.execute("CREATE TABLE t (k bigint PRIMARY KEY)")
        // PostgreSQL answers COMMIT of an aborted transaction with a ROLLBACK and no error.
        let error = try #require(throws: PostgresError.self) {
            try db.transaction {
                try db.query("INSERT INTO t VALUES (1)")
                _ = try? db.query("INSERT INTO t VALUES (1)")
            }
        }
        #expect(error.sqlState == "25P02")
        #expect(!db.isInTransaction)
        #expect(try db.scalar("SELECT count(*) FROM t") == .integer(0))
    }

    @Test func aRefusedConnectionSaysWhereNotWithWhat() throws {
        let cluster = try PostgresCluster.shared()
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnection(uri: cluster.uri(database: "no_such_database"), password: "hunter2-secret")
        }
        #expect(error.isConnectionFailure)
        #expect(error.message.contains("no_such_database"))
        #expect(!error.description.contains("hunter2-secret"))
    }
}

@Suite struct PasswordTests {
    /// The cluster asks `PostgresCluster.passwordUser` for a password (scram-sha-256).
    @Test func aPasswordIsSentWhenGivenAndNeverShown() throws {
        let uri = try PostgresCluster.passwordDatabase()
        let missing = try #require(throws: PostgresError.self) { try PostgresConnection(uri: uri) }
        #expect(missing.isConnectionFailure)
        #expect(missing.message.contains("password"), "\(missing)")
        let wrong = try #require(throws: PostgresError.self) { try PostgresConnection(uri: uri, password: "not-it-9f2c") }
        #expect(wrong.message.contains("password authentication failed"), "\(wrong)")
        #expect(!wrong.description.contains("not-it-9f2c"))
        let db = try PostgresConnection(uri: uri, password: PostgresCluster.password)
        #expect(try db.scalar("SELECT current_user::text") == .text(PostgresCluster.passwordUser))
    }
}
