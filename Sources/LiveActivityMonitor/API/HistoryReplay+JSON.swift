import JSON
import LiveActivityWire

/// The read API's events and time-driven changes, from a replay (DESIGN.md section 6).
extension HistoryReplay {
    /// A stored event as the read API serves it: the fields as ingested, `received_at`, its
    /// `effect` and `lock_screen` (what it met and changed). Both are null for an event the
    /// replay could not apply: its activity's start is no longer stored.
    func document(_ row: StoredEventRow) -> JSONText {
        let note = notes[row.seq]
        var w = JSONWriter(capacity: 160)
        w.beginObject()
        w.key("effect")
        if let effect = note?.effect {
            w.beginObject()
            w.key("result"); w.string(effect.result.rawValue)
            w.key("why"); w.string(effect.why?.rawValue)
            w.key("detail"); w.string(effect.detail)
            w.key("warnings")
            w.beginArray()
            for warning in effect.warnings { w.string(warning.name) }
            w.endArray()
            w.key("delivery"); w.string(effect.delivery?.rawValue)
            w.key("delivery_seconds"); w.number(effect.deliverySeconds)
            w.key("start"); w.string(effect.start?.rawValue)
            w.key("text"); w.string(note?.sentence)
            w.endObject()
        } else {
            w.null()
        }
        w.key("lock_screen")
        if let note { Self.write(note, to: &w) } else { w.null() }
        w.endObject()
        // The document's members, then these: both texts are objects with members.
        var text = row.document
        text.removeLast()
        text += ","
        text += String(decoding: w.bytes.dropFirst(), as: UTF8.self)
        return JSONText(written: text)
    }

    private static func write(_ note: Note, to w: inout JSONWriter) {
        w.beginObject()
        w.key("before")
        if let before = note.before {
            w.beginObject()
            w.key("state"); w.string(before.state.rawValue)
            w.key("content_timestamp"); w.date(before.contentTimestamp)
            w.key("token_fingerprint"); w.string(before.tokenFingerprint)
            w.endObject()
        } else {
            w.null()
        }
        w.key("content_changes")
        w.beginArray()
        for change in note.contentChanges {
            w.beginObject()
            w.key("key"); w.string(change.key)
            if let from = change.from { w.key("from"); w.write(from) }
            if let to = change.to { w.key("to"); w.write(to) }
            w.endObject()
        }
        w.endArray()
        w.key("token_invalidated"); w.string(note.tokenInvalidated)
        w.endObject()
    }

    /// `transitions`: what time alone changed, in time order.
    func writePassages(to w: inout JSONWriter) {
        w.beginArray()
        for passage in passages {
            w.beginObject()
            w.key("activity_id"); w.string(passage.activityID)
            w.key("kind"); w.string(passage.transition.kind.rawValue)
            w.key("at"); w.date(passage.transition.at)
            w.endObject()
        }
        w.endArray()
    }
}
