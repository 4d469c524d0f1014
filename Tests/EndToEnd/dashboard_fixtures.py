"""The known set of events the dashboard test ingests, with times relative to the real clock."""

APPLE_EPOCH = 978307200  # Swift's Date encodes as seconds since 2001-01-01

XSS = "<img src=x onerror=alert(1)>"


def token(n):
    """A push token: hex, 64 digits."""
    return f"{n:02x}" * 32


def showcase(now):
    """Events for: a ticking timer, a paused timer, rides (one with a full history), a stale
    ride, an ended ride, a dismissed ride, a priority-10-heavy ride, a generic type with a
    hostile content-state, a ride updated by a broadcast channel and a ride scheduled to start
    in an hour. Returns (events, late, facts): `late` is posted after `events`;
    `facts` name what the test will look for."""
    n = int(now)
    ev = []

    def add(**e):
        ev.append(e)
        return e

    # Workout timer started 95 s ago, startedAt in Swift's own Date encoding.
    add(type="activity.started", activity_id="timer-gym-1", booking_id="BK-GYM-7", attributes_type="TimerWidgetAttributes",
        app="com.rnu.fancytimer", occurred_at=n - 95, relevance_score=100, push_token=token(1),
        content_state={"startedAt": n - 95 - APPLE_EPOCH})
    # A paused timer: 5:00 on the clock, frozen.
    add(type="activity.started", activity_id="timer-gym-2", booking_id="BK-GYM-8", attributes_type="TimerWidgetAttributes",
        app="com.rnu.fancytimer", occurred_at=n - 400, relevance_score=60, push_token=token(2),
        content_state={"startedAt": n - 400 - APPLE_EPOCH})
    add(type="activity.updated", activity_id="timer-gym-2", occurred_at=n - 100, timestamp=n - 100,
        content_state={"startedAt": n - 400 - APPLE_EPOCH, "pausedAt": n - 100 - APPLE_EPOCH})

    # The booking with a full history (support's case): BK-1042.
    b, a = "BK-1042", "ride-1042"
    t1, t2 = token(0x10), token(0x20)
    cs = lambda p, d: {"driverName": "Ana", "rating": "4.9", "progress": p, "duration": d}
    add(type="activity.started", activity_id=a, booking_id=b, attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 900, relevance_score=90, push_token=t1,
        stale_date=n + 1800, content_state=cs(0.05, 14))
    add(id="p1", type="push.sent", activity_id=a, occurred_at=n - 840, event="update", status=200, latency_ms=41.5,
        priority=10, push_token=t1, timestamp=n - 840, stale_date=n + 1800, content_state=cs(0.15, 12))
    add(id="p2", type="push.sent", activity_id=a, occurred_at=n - 780, event="update", status=200, latency_ms=38,
        priority=10, push_token=t1, timestamp=n - 780, stale_date=n + 1800, content_state=cs(0.25, 10))
    add(type="activity.token_updated", activity_id=a, occurred_at=n - 720, push_token=t2)
    add(id="p3", type="push.sent", activity_id=a, occurred_at=n - 700, event="update", status=200, latency_ms=35,
        priority=10, push_token=t1, timestamp=n - 700, content_state=cs(0.3, 9))
    add(id="p4", type="push.sent", activity_id=a, occurred_at=n - 660, event="update", status=429, reason="TooManyRequests",
        latency_ms=12, priority=10, push_token=t2, timestamp=n - 660, content_state=cs(0.35, 8))
    add(id="p5", type="push.sent", activity_id=a, occurred_at=n - 600, event="update", status=200, latency_ms=44,
        priority=5, push_token=t2, timestamp=n - 600, stale_date=n + 1800, content_state=cs(0.4, 7))
    # Sent later but stamped earlier: the phone ignores it. Its report also reaches the
    # monitor late, after the events that followed it (the test posts it separately).
    late = dict(id="p6", type="push.sent", activity_id=a, occurred_at=n - 540, event="update", status=200, latency_ms=52,
        priority=10, push_token=t2, timestamp=n - 650, content_state=cs(0.33, 8))
    add(id="p7", type="push.sent", activity_id=a, occurred_at=n - 300, event="update", status=200, latency_ms=47,
        priority=10, push_token=t2, timestamp=n - 300, stale_date=n + 1800, content_state=cs(0.6, 5),
        alert={"title": "Ana is close", "body": "5 minutes away"})
    add(id="p8", type="push.sent", activity_id=a, occurred_at=n - 120, event="update", status=410, reason="Unregistered",
        latency_ms=29, priority=10, push_token=t2, timestamp=n - 120, content_state=cs(0.8, 3))

    # A ride at 40 %.
    add(type="activity.started", activity_id="ride-2077", booking_id="BK-2077", attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 420, relevance_score=80, push_token=token(0x30),
        stale_date=n + 3600, content_state={"driverName": "Marco", "rating": "4.7", "progress": 0.4, "duration": 7})

    # Stale: its stale date passed 5 minutes ago.
    add(type="activity.started", activity_id="ride-stale", booking_id="BK-3001", attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 1800, relevance_score=70, push_token=token(0x40),
        stale_date=n - 300, content_state={"driverName": "Li", "rating": "4.8", "progress": 0.7, "duration": 4})

    # Ended by a push 10 minutes ago, visible until its dismissal date in 50 minutes.
    visible_until = n + 3000
    add(type="activity.started", activity_id="ride-ended", booking_id="BK-3002", attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 3000, relevance_score=65, push_token=token(0x50),
        content_state={"driverName": "Sam", "rating": "5.0", "progress": 0.9, "duration": 1})
    add(id="p-end", type="push.sent", activity_id="ride-ended", occurred_at=n - 600, event="end", status=200, latency_ms=40,
        priority=10, push_token=token(0x50), timestamp=n - 600, dismissal_date=visible_until,
        content_state={"driverName": "Sam", "rating": "5.0", "progress": 1.0, "duration": 0})

    # Dismissed by the user.
    add(type="activity.started", activity_id="ride-dismissed", booking_id="BK-3003", attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 2000, push_token=token(0x60),
        content_state={"driverName": "Kim", "rating": "4.6", "progress": 1.0, "duration": 0})
    add(type="activity.ended", activity_id="ride-dismissed", occurred_at=n - 1000, dismissal_policy="immediate")

    # 17 priority-10 pushes in the last hour: over the budget of 15.
    add(type="activity.started", activity_id="ride-heavy", booking_id="BK-4040", attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 3500, relevance_score=50, push_token=token(0x70),
        content_state={"driverName": "Noor", "rating": "4.5", "progress": 0.1, "duration": 20})
    for i in range(17):
        add(id=f"heavy-{i}", type="push.sent", activity_id="ride-heavy", occurred_at=n - 3400 + i * 180, event="update",
            status=200, latency_ms=30 + i, priority=10, push_token=token(0x70), timestamp=n - 3400 + i * 180,
            content_state={"driverName": "Noor", "rating": "4.5", "progress": round(0.1 + i * 0.05, 2), "duration": 20 - i})

    # A type with no template, and a content-state that tries to inject markup.
    add(type="activity.started", activity_id="delivery-77", booking_id="BK-XSS-1", attributes_type="DeliveryAttributes",
        app="com.example.food", occurred_at=n - 200, relevance_score=30, push_token=token(0x80),
        attributes={"title": "<b>Order</b> #77"},
        content_state={"status": XSS, "courier": "Jo", "items": 3})

    # A ride subscribed to a broadcast channel (iOS 18), then one broadcast to that channel: no
    # activity, no token, priority 1. The server applies it to the subscriber.
    channel = "Y2hhbm5lbC1yaWRlcy1kb3dudG93bi1ldmVuaW5nLTAx"  # APNs channel ids are base64
    add(id="ch-create-1", type="channel.created", channel_id=channel, occurred_at=n - 700, status=201, storage_policy=1, latency_ms=80)
    add(type="activity.started", activity_id="ride-chan", booking_id="BK-CHAN-1", attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 500, relevance_score=40, channel_id=channel,
        content_state={"driverName": "Bea", "rating": "4.8", "progress": 0.2, "duration": 9})
    broadcast = {"driverName": "Bea", "rating": "4.8", "progress": 0.5, "duration": 4}
    add(id="bc-1", type="push.sent", channel_id=channel, occurred_at=n - 200, event="update", status=200, latency_ms=25,
        priority=1, timestamp=n - 200, apns_request_id="6f1f3b2c-0d4e-4c1a-9a57-3c0b6d1e2f40", content_state=broadcast)

    # A scheduled start (iOS 26): requested a minute ago, pending until an hour from now.
    start = n + 3600
    add(type="activity.started", activity_id="ride-sched", booking_id="BK-SCHED-1", attributes_type="LiveActivityAttributes",
        app="com.autopilot.rider", occurred_at=n - 60, relevance_score=95, push_token=token(0x35), start_date=start,
        content_state={"driverName": "Cleo", "rating": "4.9", "progress": 0.0, "duration": 15})

    facts = {
        "channel_ride": "ride-chan", "channel": channel, "channel_booking": "BK-CHAN-1", "broadcast": broadcast,
        "scheduled": "ride-sched", "scheduled_start": start,
        "timer": "timer-gym-1", "timer_elapsed": 95, "paused": "timer-gym-2",
        "booking": b, "ride": a, "ride40": "ride-2077", "stale": "ride-stale", "ended": "ride-ended",
        "visible_until": visible_until, "dismissed": "ride-dismissed", "heavy": "ride-heavy", "xss": "delivery-77",
        "late_push": "p6", "t_p5": n - 600, "t_start": n - 900,
    }
    return ev, [late], facts


def bulk(now, count=1000):
    """`count` running timers, low in phone order (relevance 0, started an hour ago)."""
    n = int(now)
    return [{
        "type": "activity.started", "activity_id": f"bulk-{i:04d}", "booking_id": f"BK-B{i:04d}",
        "attributes_type": "TimerWidgetAttributes", "occurred_at": n - 3600 - i, "push_token": token(0x90 + i % 100),
        "content_state": {"startedAt": n - 3600 - i - APPLE_EPOCH},
    } for i in range(count)]


def followups(now):
    """Events posted after the wall's checks (nothing here is visible, so the wall's counts
    hold): a timer dismissed 3.134 s after it started (an id with a '/', a dismissal at a time
    with milliseconds), and a push-to-start sent without an activity id (DESIGN.md section 3),
    followed by the start the device reported. Returns (events, facts)."""
    n = int(now)
    timer, p2s = "gym/timer-d1", "p2s-ride-1"
    events = [
        dict(type="activity.started", activity_id=timer, booking_id="BK-TIMER-D", attributes_type="TimerWidgetAttributes",
             app="com.rnu.fancytimer", occurred_at=n - 300, push_token=token(0xB0),
             content_state={"startedAt": n - 300 - APPLE_EPOCH}),
        dict(type="activity.dismissed", activity_id=timer, occurred_at=n - 297 + 0.134),  # x.134 s: 3.134 s after the start
        dict(id="p2s-push", type="push.sent", booking_id="BK-P2S", attributes_type="LiveActivityAttributes",
             occurred_at=n - 200, event="start", status=200, latency_ms=61, priority=10, push_token=token(0xC0),
             attributes={"rideId": "R-9"},
             content_state={"driverName": "Ida", "rating": "4.9", "progress": 0.0, "duration": 12}),
        dict(type="activity.started", activity_id=p2s, booking_id="BK-P2S", attributes_type="LiveActivityAttributes",
             app="com.autopilot.rider", occurred_at=n - 199, source="push_to_start", push_token=token(0xC1),
             content_state={"driverName": "Ida", "rating": "4.9", "progress": 0.0, "duration": 12}),
        dict(type="activity.dismissed", activity_id=p2s, occurred_at=n - 100),
    ]
    facts = {"timer_dismissed": timer, "timer_booking": "BK-TIMER-D", "t_timer_dismissed": n - 297 + 0.134,
             "p2s": p2s, "p2s_booking": "BK-P2S"}
    return events, facts
