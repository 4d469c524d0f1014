import JSON
@testable import LiveActivityMonitor

/// A fixed, realistic set of events touching every metric family: a timer and two rides, a
/// rotation, a push to the old token, APNs errors, a late update, an end, a dismissal.
enum Scenario {
    static let t0 = TestServer.base - 3600
    static let tokenA = String(repeating: "a1", count: 32)
    static let tokenB = String(repeating: "b2", count: 32)
    static let tokenC = String(repeating: "c3", count: 32)

    static func ride(_ progress: Double, _ minutes: Int) -> [String: Any] {
        ["driverName": "Ana", "rating": "4.9", "progress": progress, "duration": minutes]
    }

    static func push(_ id: String, _ key: String, at: Double, event: String = "update", status: Int = 200,
                     reason: String? = nil, priority: Int = 10, token: String = tokenA, latency: Double = 42.5,
                     timestamp: Double? = nil, content: [String: Any]? = nil, extra: [String: Any] = [:]) -> JSONValue {
        var o: [String: Any] = ["id": key, "type": "push.sent", "activity_id": id, "occurred_at": at, "event": event,
                                "status": status, "priority": priority, "latency_ms": latency, "push_token": token,
                                "timestamp": timestamp ?? at, "payload_bytes": 310]
        if let reason { o["reason"] = reason }
        if let content { o["content_state"] = content }
        o.merge(extra) { $1 }
        return JSONValue(o)
    }

    static var events: [JSONValue] {
        [
            JSONValue(["id": "s1", "type": "activity.started", "activity_id": "ride-1", "booking_id": "BK-1042",
                       "attributes_type": "LiveActivityAttributes", "occurred_at": t0, "app": "com.example.autopilot",
                       "attributes": ["name": "Live Activity"], "content_state": ride(0.1, 9), "push_token": tokenA,
                       "relevance_score": 50] as [String: Any]),
            push("ride-1", "p1", at: t0 + 60, content: ride(0.3, 7)),
            push("ride-1", "p2", at: t0 + 120, priority: 5, latency: 180, content: ride(0.5, 5)),
            push("ride-1", "p3", at: t0 + 180, timestamp: t0 + 90, content: ride(0.4, 6)),          // late
            JSONValue(["id": "r1", "type": "activity.token_updated", "activity_id": "ride-1", "occurred_at": t0 + 200,
                       "push_token": tokenB] as [String: Any]),
            push("ride-1", "p4", at: t0 + 240, token: tokenA, content: ride(0.6, 4)),                // old token
            push("ride-1", "p5", at: t0 + 300, status: 429, reason: "TooManyRequests", token: tokenB, content: ride(0.7, 3)),
            push("ride-1", "p6", at: t0 + 360, token: tokenB, latency: 1200, content: ride(0.8, 2)),
            push("ride-1", "p7", at: t0 + 420, event: "end", token: tokenB, content: ride(1.0, 0),
                 extra: ["dismissal_date": t0 + 1800]),
            push("ride-1", "p8", at: t0 + 480, token: tokenB, content: ride(1.0, 0)),                 // after end
            JSONValue(["id": "s2", "type": "activity.started", "activity_id": "timer-1", "booking_id": "BK-2001",
                       "attributes_type": "TimerWidgetAttributes", "occurred_at": t0 + 600,
                       "content_state": ["startedAt": t0 + 600], "push_token": tokenC,
                       "stale_date": t0 + 1200] as [String: Any]),
            JSONValue(["id": "x1", "type": "activity.started", "activity_id": "ride-2", "booking_id": "BK-1043",
                       "attributes_type": "LiveActivityAttributes", "occurred_at": t0 + 700,
                       "content_state": ride(0.0, 12), "push_token": tokenC] as [String: Any]),
            push("ride-2", "q1", at: t0 + 760, status: 410, reason: "Unregistered", token: tokenC, latency: 8),
            push("ride-2", "q2", at: t0 + 770, status: 400, reason: "BadDeviceToken", token: tokenC, latency: 9),
            push("ghost", "q3", at: t0 + 800, latency: 30),                                           // unknown
            JSONValue(["id": "e1", "type": "activity.ended", "activity_id": "timer-1", "occurred_at": t0 + 3000,
                       "dismissal_policy": "immediate"] as [String: Any]),
        ]
    }
}
