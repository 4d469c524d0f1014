/// What a reporter did so far. Every reported event ends up in exactly one of `accepted`,
/// `duplicates`, `rejected` and `dropped`, or is still `buffered`.
public struct ReporterStatistics: Sendable, Hashable {
    /// Events handed to `report`.
    public var reported = 0
    /// Events the server stored.
    public var accepted = 0
    /// Events the server already had: a batch sent again after its answer was lost.
    public var duplicates = 0
    /// Events the server refused for good (any answer but 2xx, 408, 429, 500, 502, 503 and
    /// 504: 400, 401, 403, 404, 413 for a single event, 415, 422, 501, 505, …) or that could not
    /// be encoded; never sent again. `lastRejection` has the last such answer.
    public var rejected = 0
    /// Events discarded unsent to keep the buffer within its bounds (oldest first, starts,
    /// ends and dismissals last), still buffered when `close()` or `close(within:)` reached
    /// its deadline, or reported after closing.
    public var dropped = 0
    /// HTTP attempts made.
    public var requests = 0
    /// Attempts that resent a batch after a failed one (timeout, dropped connection, 408, 429,
    /// 500, 502, 503, 504), to the same URL or, failing over, to the next.
    public var retries = 0
    /// Times the reporter moved to the next of several `serverURLs` after an attempt failed
    /// (always 0 with one URL).
    public var failovers = 0
    /// Events waiting to be sent now; always 0 once `close()` or `close(within:)` returned.
    public var buffered = 0

    /// The last answer that made the reporter give events up (nil if none did): a wrong ingest
    /// token (401), a wrong URL (404), invalid events (422), or an answer from something that
    /// is not the monitor. Check it when `rejected` grows.
    public var lastRejection: Rejection?

    /// An answer that made the reporter give events up for good.
    public struct Rejection: Sendable, Hashable, CustomStringConvertible {
        /// The HTTP status.
        public var status: Int
        /// The answer's `error` (for a 422, the first invalid event's id, field and rule), or
        /// the start of its body.
        public var message: String
        /// The events given up.
        public var events: Int

        public init(status: Int, message: String, events: Int) {
            self.status = status
            self.message = message
            self.events = events
        }

        public var description: String { "\(status): \(message) (\(events) event(s) dropped)" }
    }

    public init() {}
}
