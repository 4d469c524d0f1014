/// Why a JSON text was rejected, and where.
///
/// `message` is complete and safe to show a client: it names the problem and its position,
/// and sometimes what was expected there, for example
/// `unexpected ',' at line 1, column 9; expected a value`,
/// `nesting deeper than 32 at line 1, column 33`, `duplicate key "a" at line 1, column 8`
/// or `invalid UTF-8 at byte 17 (overlong encoding)` (a byte offset, as a line and column
/// mean little in malformed text). It quotes at most a 40-character member name, escaped.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problem and its position, ready for an error response.
    public let message: String
    /// 0-based byte offset of the problem in the input that was given to the parser.
    public let offset: Int
    /// 1-based line number (lines end at LF) of the problem.
    public let line: Int
    /// 1-based column of the problem, counted in Unicode scalars from the start of its line.
    public let column: Int

    /// Creates an error; the parser builds these, other layers may reuse the type.
    public init(message: String, offset: Int, line: Int, column: Int) {
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    public var description: String { message }
}
