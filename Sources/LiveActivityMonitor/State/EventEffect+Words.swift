import LiveActivityWire

/// An effect in the words support reads: the read API's `effect.text`, the booking view's rows,
/// the exports and `history`. Written here once, from what the engine decided, so that no page
/// or file keeps its own phrasing of a rule.
extension EventEffect {
    /// One sentence: what the event of `type` did, and its warnings. `answer` names a failed
    /// push's or channel request's answer.
    func sentence(of type: EventType, answer: (status: Int, reason: String?)?) -> String {
        var text: String
        switch why {
        case nil where type == .activityObserved: text = "the phone's own report of what it shows"
        case nil: text = "applied"
        case .outOfOrder?: text = "dropped: not newer than the content shown"
        case .supersededToken? where type == .activityTokenUpdated || type == .devicePushToStartToken:
            text = "no effect: a later rotation had already replaced this token"
        case .supersededToken?: text = "no effect: sent to a token that a newer one replaced"
        case .ended?: text = "no effect: the activity had already ended"
        case .dismissed?: text = "no effect: the activity was already dismissed"
        case .unknownActivity?: text = "no effect: no activity with this id had started"
        case .undecodableContent?:
            text = "no effect: the phone cannot decode its content" + (detail.map { ": " + $0 } ?? "")
        case .duplicate?: text = "no effect: an event with this id was already stored"
        case .unknownChannel?: text = "no effect: the channel had been deleted"
        case .failed?:
            let what = type.channelOperation.map { "not \($0 == .create ? "created" : "deleted")" } ?? "not delivered"
            if let answer, answer.status != 0 {
                text = "\(what): APNs answered \(answer.status)" + (answer.reason.map { " \($0)" } ?? "")
            } else {
                text = "\(what): APNs gave no answer"
            }
        }
        switch start {
        case .waiting? where why == nil: text += ": waiting for the device to start the activity"
        case .started?: text += ": the device started the activity"
        case .notStarted? where why == nil: text = "started nothing: no activity started within the start window"
        case .notStarted?: text += "; no activity started within the start window"
        case .waiting?, nil: break
        }
        switch delivery {
        case .confirmed?: text += "; shown on the phone" + (deliverySeconds.map { " after \(Self.duration($0))" } ?? "")
        case .missed?: text += "; not shown on the phone although APNs accepted it"
        case nil: break
        }
        if !warnings.isEmpty {
            text += " (warning: " + warnings.map { String($0.name.map { $0 == "_" ? " " : $0 }) }
                .joined(separator: ", ") + ")"
        }
        return text
    }

    /// A delay as people say it: "12 s", "4 min", "2 h 5 min".
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        return "\(s / 3600) h" + (s % 3600 >= 60 ? " \((s % 3600) / 60) min" : "")
    }
}
