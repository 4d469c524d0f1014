internal import CSQLite3

/// Owns one `sqlite3*` handle and closes it when the last owner lets go.
///
/// `Database` and every `Statement` it prepared hold this object, so the handle outlives all of
/// its statements in whatever order callers drop them. A `Statement` cannot hold its `Database`
/// instead: the statement cache would make a retain cycle.
final class Connection {
    let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        // Every statement retains this object, so none is left unfinalized here; close_v2 rather
        // than close so that even a bug there could never leak the handle with SQLITE_BUSY.
        sqlite3_close_v2(handle)
    }

    /// Whether an explicit transaction is open (SQLite is not in autocommit mode).
    var isInTransaction: Bool {
        sqlite3_get_autocommit(handle) == 0
    }

    /// The error for a call that just returned `resultCode`, with SQLite's message and `context`.
    ///
    /// Must be called right after the failing call: `sqlite3_errmsg` describes the latest call.
    func error(_ resultCode: Int32, _ context: String) -> SQLiteError {
        // Calls such as sqlite3_step can return only the primary code; the connection knows the
        // extended one when it is about the same failure.
        let extended = sqlite3_extended_errcode(handle)
        let code = (extended & 0xFF) == (resultCode & 0xFF) ? extended : resultCode
        let message = String(cString: sqlite3_errmsg(handle))
        return SQLiteError(code: code, message: context.isEmpty ? message : "\(message), \(context)")
    }

    /// `sql` shortened for error messages: statements are named, not dumped.
    static func excerpt<S: StringProtocol>(_ sql: S) -> String {
        let limit = 160
        let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count <= limit ? flat : flat.prefix(limit) + "…"
    }
}
