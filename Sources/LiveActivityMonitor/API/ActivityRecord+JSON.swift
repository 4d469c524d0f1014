import JSON

/// The read API's activity shape (DESIGN.md section 6), computed at `now`.
extension ActivityRecord {
    /// `priority10Budget` is `--priority10-budget`: `priority10_heavy` says whether the activity
    /// counts in `liveactivity_priority10_heavy_activities` at `now`.
    func write(to w: inout JSONWriter, now: Double, priority10Budget: Int) {
        w.beginObject()
        writeMembers(to: &w, now: now, priority10Budget: priority10Budget)
        w.endObject()
    }

    /// The activity's members, for an object the caller opened (and may add to).
    func writeMembers(to w: inout JSONWriter, now: Double, priority10Budget: Int) {
        func date(_ key: String, _ value: Double?) {
            w.key(key)
            w.date(value)
        }
        assert(textsInRow.isEmpty, "texts are filled from the row before a page shows the record (MonitorStore.fillTexts)")
        let state = state(at: now)
        w.key("activity_id"); w.string(activityID)
        w.key("booking_id"); w.string(bookingID)
        w.key("attributes_type"); w.string(attributesType)
        w.key("app"); w.string(app)
        w.key("source"); w.string(source.rawValue)
        w.key("state"); w.string(state.rawValue)
        date("started_at", startedAt)
        date("start_date", startDate)
        w.key("channel_id"); w.string(channelID)
        date("ended_at", endedAt ?? (now >= systemEndAt ? systemEndAt : nil))
        w.key("ended_by"); w.string(endedBy?.rawValue ?? (now >= systemEndAt ? EndedBy.system.rawValue : nil))
        date("stale_date", staleDate)
        date("visible_until", visibleUntil(at: now))
        date("dismissed_at", dismissedAt ?? (state == .dismissed ? visibleUntil(at: now) : nil))
        w.key("relevance_score"); w.number(relevanceScore)
        w.key("attributes"); w.write(attributes)
        w.key("content_state"); w.write(contentState)
        date("content_timestamp", contentTimestamp)
        w.key("token")
        w.beginObject()
        w.key("fingerprint"); w.string(tokenFingerprint)
        w.key("rotations"); w.number(Int64(tokenRotations))
        date("rotated_at", tokenRotatedAt)
        w.key("invalidated"); w.bool(tokenInvalidated)
        w.key("invalid_reason"); w.string(tokenInvalidReason)
        w.endObject()
        w.key("last_push")
        if let p = lastPush {
            w.beginObject()
            w.key("status"); w.number(Int64(p.status))
            w.key("reason"); w.string(p.reason)
            w.key("latency_ms"); w.number(p.latencyMs)
            w.key("priority"); w.number(Int64(p.priority))
            date("at", p.at)
            w.endObject()
        } else {
            w.null()
        }
        w.key("priority10_last_hour"); w.number(Int64(priority10Count(at: now)))
        w.key("priority10_heavy"); w.bool(isPriority10Heavy(at: now, budget: priority10Budget))
        w.key("delivery")
        w.beginObject()
        date("last_confirmed_at", delivery.lastConfirmedAt)
        w.key("missed"); w.number(Int64(delivery.missed))
        w.endObject()
        w.key("undecodable")
        if let undecodable {
            w.beginObject()
            date("at", undecodable.at)
            w.key("detail"); w.string(undecodable.detail)
            w.endObject()
        } else {
            w.null()
        }
    }

    /// The dashboard's order, which is the phone's (`PhoneOrderKey`).
    static func phoneOrder(_ a: ActivityRecord, _ b: ActivityRecord) -> Bool {
        PhoneOrderKey.ordered(PhoneOrderKey(a), PhoneOrderKey(b))
    }
}
