/// The event types of the ingest contract (DESIGN.md section 3).
public enum EventType: String, Sendable, CaseIterable {
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

    /// What a channel request asked of APNs; nil for the other types.
    var channelOperation: ChannelRequest.Operation? {
        switch self {
        case .channelCreated: .create
        case .channelDeleted: .delete
        default: nil
        }
    }
}

/// The `aps.event` of a push.
public enum PushKind: String, Sendable, CaseIterable {
    case start, update, end
}

/// How an activity came to be: requested by the app, or started remotely by a push.
public enum StartSource: String, Sendable, CaseIterable {
    case app
    case pushToStart = "push_to_start"
}

/// ActivityKit's dismissal policies for an ended activity.
public enum DismissalPolicy: String, Sendable, CaseIterable {
    case `default`, immediate, after
}

/// Who ended an activity: the app, a push with `event: end`, or the system after 8 hours.
public enum EndedBy: String, Sendable, CaseIterable {
    case app, push, system
}
