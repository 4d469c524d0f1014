/// Reads `/metrics` text as a test needs it.
public enum MetricsText {
    /// The value of one exact series line, e.g. `liveactivity_activities{attributes_type="X",state="active"}`.
    public static func value(of series: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The exposition without the families that describe the process or its timing rather than
    /// the stored data.
    public static func dataOnly(_ text: String, keepHTTP: Bool = true) -> String {
        let volatile = ["process_", "liveactivity_store_commit_seconds", "liveactivity_store_size_bytes"]
            + (keepHTTP ? [] : ["liveactivity_http_requests_total"])
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            let name = line.hasPrefix("# ") ? String(line.split(separator: " ").dropFirst(2).first ?? "") : String(line)
            return !volatile.contains { name.hasPrefix($0) }
        }.joined(separator: "\n")
    }
}
