import Foundation
import Synchronization
import Testing
@testable import LiveActivityReporter

/// `ActivityLifecycle`: the order and the ids of what `ActivityTracker` reports about an
/// activity's life (the tracker's ActivityKit glue builds on iOS only; this is the part that
/// decides, built and tested here). In process with a recording `report`, then against the real
/// monitor: an app's start, stop and relaunch never count as an ingest conflict.
@Suite(.serialized)
struct ActivityLifecycleTests {
    /// A stop pressed milliseconds after the start: `end` waits for the start's report, however
    /// long it takes, so the monitor never gets the end of an activity it has not seen start.
    @Test func theEndWaitsForTheStartsReport() async throws {
        let reports = Reports(holdingStarts: true)
        let lifecycle = ActivityLifecycle(report: reports.report)
        lifecycle.start(Self.started("A", at: 0))
        let ending = Task { await lifecycle.end(.ended(activityID: "A", ActivityEnded(dismissalPolicy: .immediate))) }
        // The other reports of the activity wait for the start too.
        let observing = Task {
            await lifecycle.afterStart("A")
            reports.note("after start")
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(reports.kinds.isEmpty, "nothing goes before the start: \(reports.kinds)")
        reports.releaseStarts()
        #expect(await ending.value)
        await observing.value
        #expect(reports.kinds.first == "activity.started")
        #expect(reports.kinds.filter { $0 != "after start" } == ["activity.started", "activity.ended"])
    }

    /// An app-side stop is seen twice, by `end()` (with the dismissal policy) and by the state
    /// observer (with the final content): one report, `end()`'s, under `A:ended`. Ending it
    /// again (ActivityKit says it ended) and a second dismissal report nothing.
    @Test func anEndIsReportedOnceByWhicheverSideComesFirst() async throws {
        let reports = Reports()
        let lifecycle = ActivityLifecycle(report: reports.report)
        lifecycle.start(Self.started("A", at: 0))
        #expect(await lifecycle.end(.ended(activityID: "A", ActivityEnded(dismissalPolicy: .immediate), occurredAt: Samples.at(10))))
        #expect(await lifecycle.end(.ended(activityID: "A", ActivityEnded(contentState: ["startedAt": 1]),
                                           occurredAt: Samples.at(10.2))) == false, "the observer's report of the same end")
        #expect(await lifecycle.end(.ended(activityID: "A", ActivityEnded(dismissalPolicy: .default), occurredAt: Samples.at(11)),
                                    alreadyEnded: true) == false, "end() again")
        #expect(await lifecycle.dismiss(.dismissed(activityID: "A", occurredAt: Samples.at(12))))
        #expect(await lifecycle.dismiss(.dismissed(activityID: "A", occurredAt: Samples.at(13))) == false)

        let events = reports.events
        #expect(events.map(\.kind.rawValue) == ["activity.started", "activity.ended", "activity.dismissed"])
        #expect(events[1].id == "A:ended" && events[2].id == "A:dismissed")
        guard case .ended(let fields) = events[1].payload else { Issue.record("not an end"); return }
        #expect(fields.dismissalPolicy == .immediate)

        // Ended by a push: the observer reports first; the app's `end()` afterwards finds the
        // activity ended and reports nothing.
        lifecycle.start(Self.started("B", at: 20))
        #expect(await lifecycle.end(.ended(activityID: "B", ActivityEnded(contentState: ["startedAt": 2]), occurredAt: Samples.at(21))))
        #expect(await lifecycle.end(.ended(activityID: "B", ActivityEnded(dismissalPolicy: .immediate), occurredAt: Samples.at(22)),
                                    alreadyEnded: true) == false)
        #expect(reports.events.filter { $0.activityID == "B" && $0.kind == .activityEnded }.count == 1)
    }

    /// Tracking an activity again in the same process (after `stopTracking`) reports nothing
    /// again. In a new process (a relaunch) its start is reported again under a fresh id, since
    /// the content and time are the phone's now; its end, already behind it, is not.
    @Test func aStartIsReportedOncePerProcessUnderAFreshID() async throws {
        let reports = Reports()
        let first = ActivityLifecycle(report: reports.report)
        first.start(Self.started("A", at: 0))
        first.start(Self.started("A", at: 5))
        await first.afterStart("A")
        #expect(await first.end(.ended(activityID: "A", occurredAt: Samples.at(10))))

        let relaunched = ActivityLifecycle(report: reports.report)
        relaunched.start(Self.started("A", at: 30, content: ["startedAt": 817_000_030]), alreadyEnded: true)
        #expect(await relaunched.end(.ended(activityID: "A", occurredAt: Samples.at(31))) == false, "the observer at relaunch")
        #expect(await relaunched.end(.ended(activityID: "A", occurredAt: Samples.at(32)), alreadyEnded: true) == false)
        await relaunched.afterStart("A")

        let starts = reports.events.filter { $0.kind == .activityStarted }
        #expect(starts.map(\.occurredAt) == [Samples.at(0), Samples.at(30)])
        #expect(Set(starts.map(\.id)).count == 2, "two bodies, two ids")
        #expect(starts.allSatisfy { UUID(uuidString: $0.id) != nil }, "time-ordered ids, as every fresh id")
        #expect(reports.events.filter { $0.kind == .activityEnded }.count == 1)
    }

    /// The monitor's own view of an app's life over two runs: the first starts A and B and stops
    /// A (`end()`, then the observer); the relaunch tracks both again, finds A ended, tries to end
    /// it again, stops B, and both are dismissed. Every report is stored or counted once, and no
    /// id came with two bodies: `liveactivity_ingest_conflicts_total` stays 0.
    @Test func aStopAndARelaunchCountNoIngestConflict() async throws {
        let server = try LiveServer()
        defer { server.stop() }

        let firstRun = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url), sleep: SleepRecorder().immediate)
        let first = ActivityLifecycle(report: { await firstRun.report($0) })
        first.start(Self.started("A", at: 0))
        first.start(Self.started("B", at: 1))
        #expect(await first.end(.ended(activityID: "A", ActivityEnded(dismissalPolicy: .default), occurredAt: Samples.at(10))))
        await first.end(.ended(activityID: "A", ActivityEnded(contentState: ["startedAt": 817_000_000]), occurredAt: Samples.at(10.1)))
        #expect(await firstRun.flush())

        let secondRun = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url), sleep: SleepRecorder().immediate)
        let second = ActivityLifecycle(report: { await secondRun.report($0) })
        second.start(Self.started("A", at: 20, content: ["startedAt": 817_000_020]), alreadyEnded: true)
        second.start(Self.started("B", at: 20, content: ["startedAt": 817_000_021]))
        await second.end(.ended(activityID: "A", occurredAt: Samples.at(20.1)))
        await second.end(.ended(activityID: "A", ActivityEnded(dismissalPolicy: .immediate), occurredAt: Samples.at(21)), alreadyEnded: true)
        await second.dismiss(.dismissed(activityID: "A", occurredAt: Samples.at(21.1)))
        await second.end(.ended(activityID: "B", ActivityEnded(dismissalPolicy: .immediate), occurredAt: Samples.at(25)))
        await second.end(.ended(activityID: "B", ActivityEnded(contentState: ["startedAt": 817_000_021]), occurredAt: Samples.at(25.1)))
        await second.dismiss(.dismissed(activityID: "B", occurredAt: Samples.at(25.2)))
        #expect(await secondRun.flush())

        #expect(try await server.metric("liveactivity_ingest_conflicts_total") == 0)
        #expect(try await server.metric("liveactivity_ingest_duplicates_total") == 0)
        #expect(try await server.metric(#"liveactivity_activities_started_total{attributes_type="TimerWidgetAttributes",source="app"}"#) == 2)
        #expect(try await server.metric(#"liveactivity_activities_ended_total{attributes_type="TimerWidgetAttributes",by="app"}"#) == 2)
        #expect(try await server.metric(#"liveactivity_activities_dismissed_total{attributes_type="TimerWidgetAttributes"}"#) == 2)
        let stored = try await server.events(booking: "BK-A")
        #expect(stored.values.compactMap { $0["type"]?.stringValue }.sorted()
                == ["activity.dismissed", "activity.ended", "activity.started", "activity.started"])
        #expect(stored["A:ended"]?["dismissal_policy"] == "default", "the stop's report, with its policy")
        let counts = (await firstRun.statistics, await secondRun.statistics)
        #expect(counts.0.accepted == 3 && counts.1.accepted == 5, "\(counts)")
    }

    static func started(_ activityID: String, at seconds: Double,
                        content: JSONContent = ["startedAt": 817_000_000]) -> LiveActivityEvent {
        .started(activityID: activityID, bookingID: "BK-" + activityID, attributesType: "TimerWidgetAttributes",
                 ActivityStarted(contentState: content, attributes: [:], source: .app), occurredAt: Samples.at(seconds))
    }
}

/// A `report` for `ActivityLifecycle` that records what it is given, in the order the reports
/// end, and can hold every start's report until released (a slow reporter).
private final class Reports: Sendable {
    private let state: Mutex<(log: [String], events: [LiveActivityEvent], holding: Bool,
                              held: [CheckedContinuation<Void, Never>])>

    init(holdingStarts: Bool = false) {
        state = Mutex(([], [], holdingStarts, []))
    }

    var report: ActivityLifecycle.Report {
        { [self] event in await take(event) }
    }

    var events: [LiveActivityEvent] { state.withLock { $0.events } }
    /// The kinds reported and the notes, in order.
    var kinds: [String] { state.withLock { $0.log } }

    func note(_ line: String) {
        state.withLock { $0.log.append(line) }
    }

    func releaseStarts() {
        let held = state.withLock { s in
            s.holding = false
            defer { s.held = [] }
            return s.held
        }
        for continuation in held { continuation.resume() }
    }

    private func take(_ event: LiveActivityEvent) async {
        if event.kind == .activityStarted {
            await withCheckedContinuation { continuation in
                let hold = state.withLock { s in
                    if s.holding { s.held.append(continuation) }
                    return s.holding
                }
                if !hold { continuation.resume() }
            }
        }
        state.withLock { s in
            s.events.append(event)
            s.log.append(event.kind.rawValue)
        }
    }
}
