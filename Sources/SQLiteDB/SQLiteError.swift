internal import CSQLite3

/// A failed SQLite call: its result code and SQLite's own message, with context.
///
/// The message is `sqlite3_errmsg` plus which statement failed (its SQL text, shortened). It never
/// contains bound values, so it is safe to log even when the values were tokens or personal data.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_FULL`, ...): the low byte of `extendedCode`.
    public let code: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_READONLY_DBMOVED`, ...).
    public let extendedCode: Int32
    /// SQLite's message and what was being done, e.g. which statement.
    public let message: String

    /// An error with the given (extended or primary) result code and message.
    public init(code extendedCode: Int32, message: String) {
        self.code = extendedCode & 0xFF
        self.extendedCode = extendedCode
        self.message = message
    }

    /// The database or disk is full (`SQLITE_FULL`), including a `PRAGMA max_page_count` limit.
    public var isDiskFull: Bool { code == SQLITE_FULL }
    /// A write was attempted on a read-only connection or file (`SQLITE_READONLY`, any extended code).
    public var isReadOnly: Bool { code == SQLITE_READONLY }
    /// Another connection held a lock past the busy timeout (`SQLITE_BUSY` or `SQLITE_LOCKED`).
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
    /// The file is not an SQLite database (`SQLITE_NOTADB`), found at its first read.
    public var isNotADatabase: Bool { code == SQLITE_NOTADB }
    /// A UNIQUE, NOT NULL, CHECK, FOREIGN KEY or other constraint failed (`SQLITE_CONSTRAINT`).
    public var isConstraint: Bool { code == SQLITE_CONSTRAINT }

    /// For example `SQLite error 2067 (constraint failed): UNIQUE constraint failed: t.name, in "INSERT …"`.
    public var description: String {
        "SQLite error \(extendedCode) (\(String(cString: sqlite3_errstr(extendedCode)))): \(message)"
    }

    /// The same error with `context` in front of its message.
    func prefixed(_ context: String) -> SQLiteError {
        SQLiteError(code: extendedCode, message: "\(context): \(message)")
    }
}
