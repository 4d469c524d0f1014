/// What a reporter did so far. Every reported event ends up in exactly one of `accepted`,
/// `duplicates`, `rejected` and `dropped`, or is still `buffered`.
public struct ReporterStatistics: Sendable, Hashable {
    /// Events handed to `report`.
    public var reported = 0
    /// Events the server stored.
    public var accepted = 0
    /// Events the server already had: a batch sent again after its answer was lost.
    public var duplicates = 0
    /// Events the server refused (a 4xx other than 408 and 429) or that could not be encoded;
    /// never sent again.
    public var rejected = 0
    /// Events discarded unsent to keep the buffer within its bounds (oldest first, starts,
    /// ends and dismissals last), still buffered when `close()` or `close(within:)` reached
    /// its deadline, or reported after closing.
    public var dropped = 0
    /// HTTP attempts made.
    public var requests = 0
    /// Attempts that followed a failed one (timeout, dropped connection, 5xx, 408, 429).
    public var retries = 0
    /// Events waiting to be sent now; always 0 once `close()` or `close(within:)` returned.
    public var buffered = 0

    public init() {}
}
