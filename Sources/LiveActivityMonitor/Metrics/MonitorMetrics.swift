/// Every metric the server exports (DESIGN.md section 5), with its help text, type, labels and
/// buckets. Nothing outside this file names a metric.
public enum MonitorMetrics {
    public struct Family: Sendable {
        public let name: String
        public let help: String
        public let labels: [String]
        public let buckets: [Double]
    }

    static func family(_ name: String, _ help: String, _ labels: [String] = [], buckets: [Double] = []) -> Family {
        Family(name: "liveactivity_" + name, help: help, labels: labels, buckets: buckets)
    }

    // Gauges computed at scrape time from in-memory state.
    public static let activities = family("activities",
        "Activities on lock screens now, by state (ended = ended but still visible).", ["attributes_type", "state"])
    public static let priority10Heavy = family("priority10_heavy_activities",
        "Live activities sent more priority-10 pushes in the last hour than the budget.")
    public static let storeSize = family("store_size_bytes", "Size of the SQLite database and its WAL.")
    public static let buildInfo = family("build_info", "Build of the running server; always 1.", ["revision", "version"])
    public static let leader = family("leader",
        "1 while this replica leads (takes events, exports the other liveactivity_ metrics), else 0; one SQLite server always leads.")
    public static let channelSubscriptions = family("channel_subscriptions",
        "Live activities (pending, active or stale) subscribed to a broadcast channel.", ["attributes_type"])
    public static let channels = family("channels",
        "Live broadcast channels (created, not deleted), by message storage policy; APNs allows 10,000 per app and environment.",
        ["storage_policy"])
    public static let pushToStartTokens = family("push_to_start_tokens",
        "Devices with a current push-to-start token, by attributes type.", ["attributes_type"])
    public static let evictedActivities = family("activities_evicted_total",
        "Live activities taken out of memory since start because there were more than --max-live-activities (still stored).")
    public static let contentShapeTypes = family("content_shape_types",
        "Attributes types with a known content shape (learned from the app, or declared by a template).")
    public static let unrenderableSeries = family("unrenderable_series",
        "Stored series left out of this scrape because their labels do not fit their family (0 unless the counters table was damaged).")

    // Counters persisted with the events that move them, so they survive restarts.
    public static let started = family("activities_started_total",
        "Activities started, by how they started.", ["attributes_type", "source"])
    public static let ended = family("activities_ended_total",
        "Activities ended, by who ended them.", ["attributes_type", "by"])
    public static let dismissed = family("activities_dismissed_total",
        "Activities removed from the lock screen.", ["attributes_type"])
    public static let staleTransitions = family("stale_transitions_total",
        "Times an activity became stale.", ["attributes_type"])
    public static let pushRequests = family("push_requests_total",
        "APNs requests reported, by APNs answer.", ["event", "priority", "reason", "status"])
    public static let pushLatency = family("push_latency_seconds",
        "APNs request latency reported by the backend.", ["event", "priority"],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
    public static let pushPayload = family("push_payload_bytes",
        "Size of push payloads; APNs refuses more than 4096 bytes.", ["event"],
        buckets: [256, 512, 1024, 2048, 3072, 4096, 5120])
    public static let pushWarnings = family("push_warnings_total",
        "Events stored with a warning: strange but possible values (DESIGN.md section 4), by warning.", ["warning"])
    public static let tokenRotations = family("push_token_rotations_total",
        "Push token rotations reported by devices.", ["attributes_type"])
    public static let tokensInvalidated = family("push_tokens_invalidated_total",
        "Push tokens APNs declared invalid.", ["reason"])
    public static let pushesWithoutEffect = family("pushes_without_effect_total",
        "Pushes APNs accepted that cannot change what the phone shows.", ["why"])
    public static let pushDeliveries = family("push_deliveries_total",
        "Applied 200 pushes the phone's observations confirmed or showed missed (DESIGN.md section 4).", ["outcome"])
    public static let pushDeliverySeconds = family("push_delivery_seconds",
        "From a push to the observation that confirmed it.", buckets: evidenceBuckets)
    public static let pushToStart = family("push_to_start_total",
        "200 start pushes whose activity started within the start window, or did not.", ["outcome"])
    public static let pushToStartSeconds = family("push_to_start_seconds",
        "From a start push to the activity.started it caused.", buckets: evidenceBuckets)
    public static let pushToStartTokenRotations = family("push_to_start_token_rotations_total",
        "Push-to-start tokens devices replaced with a new one.", ["attributes_type"])
    public static let broadcastPushes = family("broadcast_pushes_total",
        "APNs broadcast requests (push.sent to a channel) reported, by APNs answer.", ["event", "priority", "reason", "status"])
    public static let broadcastLatency = family("broadcast_latency_seconds",
        "APNs broadcast request latency reported by the backend.", ["event", "priority"], buckets: pushLatency.buckets)
    public static let channelRequests = family("channel_requests_total",
        "APNs channel management requests (channel.created, channel.deleted) reported, by answer.", ["op", "reason", "status"])
    public static let ingestEvents = family("ingest_events_total", "Events stored, by type.", ["type"])
    public static let ingestRejected = family("ingest_rejected_total", "Ingest requests refused, by reason.", ["reason"])
    public static let ingestDuplicates = family("ingest_duplicates_total", "Events received again under an id already stored.")
    public static let ingestConflicts = family("ingest_conflicts_total",
        "Events received under an id already stored with other content (counted in duplicates too; the stored one stays).")

    /// Seconds from a push to what the phone showed of it.
    static let evidenceBuckets: [Double] = [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800]

    // Process-scoped: they describe this process, not the stored data.
    // Up to 10 s: a commit can wait out SQLite's 5 s busy timeout and a stalled disk, and a
    // p99 beyond the top bucket would read as that bucket.
    public static let commitSeconds = family("store_commit_seconds",
        "Time to commit one group of ingest requests durably.",
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
    public static let httpRequests = family("http_requests_total",
        "HTTP requests answered, by route template and status code.", ["code", "handler"])

    /// Counter families persisted in the `counters` table.
    public static let persistedCounters = [started, ended, dismissed, staleTransitions, pushRequests,
                                           tokenRotations, tokensInvalidated, pushesWithoutEffect,
                                           ingestEvents, ingestRejected, ingestDuplicates, ingestConflicts,
                                           pushWarnings, pushDeliveries, pushToStart, pushToStartTokenRotations,
                                           broadcastPushes, channelRequests]
    public static let persistedHistograms = [pushLatency, pushPayload, pushDeliverySeconds, pushToStartSeconds,
                                             broadcastLatency]

    /// The persisted family named `name`, counter or histogram.
    static func persistedFamily(named name: String) -> Family? {
        (persistedCounters + persistedHistograms).first { $0.name == name }
    }

    /// Whether a stored series belongs to one of `families` and has one value per label name.
    static func fits(_ key: SeriesKey, _ families: [Family]) -> Bool {
        families.contains { $0.name == key.family && $0.labels.count == key.labelValues.count }
    }

    /// The `why` label of `pushes_without_effect_total`: why an accepted push had no effect. A
    /// push APNs refused (`failed`) is counted by its answer in `push_requests_total`, a repeated
    /// event id (`duplicate`) in `ingest_duplicates_total`.
    public static let withoutEffectReasons: [EventEffect.Why] = [
        .supersededToken, .ended, .dismissed, .unknownActivity, .outOfOrder, .undecodableContent, .unknownChannel,
    ]

    /// Why an ingest request was refused (the `reason` label).
    public enum Rejection: String, CaseIterable, Sendable {
        case unauthorized, unsupportedMediaType = "unsupported_media_type", tooLarge = "too_large"
        case malformed, invalid, unavailable
    }

    /// APNs statuses and reasons reported as themselves; anything else is `other` (labels come
    /// from closed sets). The sets are APNs' (`PushResult.knownStatuses`, `knownReasons`).
    static var knownStatuses: Set<Int> { PushResult.knownStatuses }
    static var knownReasons: Set<String> { PushResult.knownReasons }

    static func statusLabel(_ status: Int) -> String {
        knownStatuses.contains(status) ? String(status) : "other"
    }

    /// A channel request's status: the channel management API's (201, 204…) as themselves.
    static func channelStatusLabel(_ status: Int) -> String {
        ChannelRequest.knownStatuses.contains(status) ? String(status) : "other"
    }

    static func reasonLabel(_ reason: String?) -> String {
        guard let reason else { return "none" }
        return knownReasons.contains(reason) ? reason : "other"
    }
}
