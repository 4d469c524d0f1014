/// The event types of the ingest contract (DESIGN.md section 3).
public enum EventType: String, Sendable, Hashable, CaseIterable {
    case activityStarted = "activity.started"
    case activityUpdated = "activity.updated"
    case activityTokenUpdated = "activity.token_updated"
    case activityStale = "activity.stale"
    case activityEnded = "activity.ended"
    case activityDismissed = "activity.dismissed"
    case pushSent = "push.sent"
    /// What ActivityKit reports the activity shows now: evidence about pushes, not an update.
    case activityObserved = "activity.observed"
    /// A device's push-to-start token for one attributes type (a newer one supersedes it).
    case devicePushToStartToken = "device.push_to_start_token"
    /// The backend's call to APNs' channel management API: a channel created, or deleted.
    case channelCreated = "channel.created"
    case channelDeleted = "channel.deleted"
}
