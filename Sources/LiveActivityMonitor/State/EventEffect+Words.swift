/// An effect in the words support reads: the read API's `effect.text`, the booking view's rows,
/// the exports and `history`. Written here once, from what the engine decided, so that no page
/// or file keeps its own phrasing of a rule.
extension EventEffect {
    /// One sentence: what the event of `type` did, and its warnings. `push` names a failed
    /// push's answer.
    func sentence(of type: EventType, push: PushResult?) -> String {
        var text: String
        switch why {
        case nil: text = "applied"
        case .outOfOrder?: text = "dropped: not newer than the content shown"
        case .supersededToken? where type == .activityTokenUpdated:
            text = "no effect: a later rotation had already replaced this token"
        case .supersededToken?: text = "no effect: sent to a token that a newer one replaced"
        case .ended?: text = "no effect: the activity had already ended"
        case .dismissed?: text = "no effect: the activity was already dismissed"
        case .unknownActivity?: text = "no effect: no activity with this id had started"
        case .undecodableContent?:
            text = "no effect: the phone cannot decode its content" + (detail.map { ": " + $0 } ?? "")
        case .duplicate?: text = "no effect: an event with this id was already stored"
        case .failed?:
            if let push, push.status != 0 {
                text = "not delivered: APNs answered \(push.status)" + (push.reason.map { " \($0)" } ?? "")
            } else {
                text = "not delivered: APNs gave no answer"
            }
        }
        if !warnings.isEmpty {
            text += " (warning: " + warnings.map { String($0.name.map { $0 == "_" ? " " : $0 }) }
                .joined(separator: ", ") + ")"
        }
        return text
    }
}
