import Foundation

/// Sends `LiveActivityEvent`s to a Live Activity Monitor: in batches, in order, retrying
/// failures with back-off and jitter, within bounded memory.
///
/// - `report(_:)` only encodes and buffers; sending happens in the background. A batch goes
///   when it is full (`maxBatchEvents`), after `batchDelay`, or on `flush()`.
/// - Timeouts, dropped connections and the answers 500, 502, 503 and 504 (and the 408 and 429 of
///   a proxy in front of the monitor) are retried after a back-off (`RetryPolicy`, at least the
///   answer's `Retry-After`), resending the same events with the same `id`s: the monitor stores
///   and counts an id once, so a retry whose first answer was lost is never double-counted.
/// - Other answers (400, 401, 403, 404, 415, 501, 505, …) would be the same for the same
///   request: never retried, the batch is counted in `statistics.rejected` and the answer kept
///   in `statistics.lastRejection`. A 422 names the invalid events: those are dropped and the
///   others of the batch, which the monitor did not store, go again. A 413 halves the batch
///   size; it doubles again, up to `maxBatchEvents`, after every 10 batches accepted in a row.
///   A 413 for a single event says that event is too large, not the batches: it is rejected
///   (never sent again), and the halvings the 413s of batches holding it caused are undone.
/// - While the monitor is unreachable, events wait in a buffer bounded by
///   `maxBufferedEvents` and `maxBufferedBytes`; past that the oldest are dropped and counted,
///   updates and push results before starts, ends and dismissals.
///
/// - With several `serverURLs` (a monitor's replicas), an attempt that would be retried moves
///   the batch to the next URL at once, round robin, with the same `id`s; the reporter stays on
///   the URL that answered. Only after a full round of failed attempts in a row does it back
///   off as above (at least the round's longest `Retry-After`). Other answers (a 422, a 401)
///   are about the batch, not the replica: they never move it.
///
/// One batch is in flight at a time, so events arrive in the order they were reported.
@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
public actor ActivityReporter {
    /// Waits the given number of seconds; must end early, by throwing, when its task is
    /// cancelled (the reporter cancels a wait to send at once on `flush()`).
    public typealias Sleep = @Sendable (TimeInterval) async throws -> Void

    public nonisolated let configuration: ReporterConfiguration
    private let transport: any ReporterTransport
    private let sleep: Sleep
    private let random: @Sendable () -> Double
    private let encoder = LiveActivityEvent.makeEncoder()

    private var buffer: EventBuffer
    private var stats = ReporterStatistics()
    /// The background task sending the buffer; nil when the buffer is empty.
    private var driver: Task<Void, Never>?
    /// The driver's current wait, which `flush()` (and a full batch, while batching) cuts short,
    /// except a back-off the monitor's answer asked for.
    private var wait: (task: Task<Void, Never>, kind: WaitKind)?
    private var flushRequested = false
    /// `flush()` calls waiting for an outcome, by a number of their own (to let a cancelled one
    /// go), each with `givenUp` as it was when the call began.
    private var flushWaiters: [Int: (continuation: CheckedContinuation<Bool, Never>, givenUpBefore: Int)] = [:]
    private var nextFlushWaiter = 0
    /// Consecutive rounds of failed attempts (with one URL, consecutive failed attempts): the
    /// back-off grows with it.
    private var failures = 0
    /// The index in `configuration.serverURLs` of the URL batches go to.
    private var current = 0
    /// Failed attempts in a row in the current round (each on the next URL), and what they
    /// asked for: whether any was answered, and the longest `Retry-After`.
    private var round: (failed: Int, answered: Bool, retryAfter: TimeInterval?) = (0, false, nil)
    /// Events per request; halved when the server answers 413, doubled again (up to
    /// `fullBatchLimit`) after `regrowAfter` batches in a row were accepted.
    private var batchLimit: Int
    /// Events per request as configured.
    private let fullBatchLimit: Int
    /// Batches accepted since `batchLimit` last changed.
    private var acceptedAtLimit = 0
    /// The 413s that lowered `batchLimit` and may yet turn out to be one event's fault: the limit
    /// before each, and the `seq` of the refused batch's last event (it began at the buffer's
    /// front). Kept while some of that batch is still buffered.
    private var shrinks: [(limitBefore: Int, through: Int)] = []
    /// Accepted batches before a lowered batch size is doubled: against a monitor whose limit
    /// stays low, at most one request in `regrowAfter + 1` is a 413.
    static let regrowAfter = 10
    private var closed = false
    /// Whether a 2xx without the monitor's summary was logged (once: it says the URL is wrong).
    private var warnedAboutForeignAnswer = false
    /// While `close()` or `close(within:)` runs: the seconds left until its deadline.
    private var closeBudget: TimeInterval?

    /// - Parameters:
    ///   - transport: how to send HTTP; by default a `URLSessionTransport` whose session times
    ///     out after the configuration's `requestTimeout`.
    ///   - sleep: how to wait; tests pass a recording clock.
    ///   - random: uniform in [0, 1), for jitter.
    public init(configuration: ReporterConfiguration,
                transport: (any ReporterTransport)? = nil,
                sleep: @escaping Sleep = ActivityReporter.taskSleep,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.configuration = configuration
        self.transport = transport ?? URLSessionTransport(requestTimeout: configuration.requestTimeout)
        self.sleep = sleep
        self.random = random
        buffer = EventBuffer(maxEvents: configuration.maxBufferedEvents, maxBytes: configuration.maxBufferedBytes)
        // The monitor takes at most 1,000 events a request: more would be refused every time.
        fullBatchLimit = max(1, min(configuration.maxBatchEvents, configuration.maxBufferedEvents, Self.largestBatch))
        batchLimit = fullBatchLimit
        for url in configuration.serverURLs {
            if let warning = Self.plainHTTPWarning(url) { configuration.log?(warning) }
        }
    }

    /// Plain `http://` beyond this machine carries the ingest token (and booking ids) readable
    /// by anything on the way: worth a line in the log, once, when the reporter is made.
    static func plainHTTPWarning(_ url: URL) -> String? {
        guard url.scheme?.lowercased() == "http", let host = url.host?.lowercased() else { return nil }
        let local = host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        return local ? nil : "sending to \(url) over plain HTTP: the ingest token and events can be read on the way; use https:// beyond this machine"
    }

    /// A reporter with the default configuration for `serverURL`.
    public init(serverURL: URL, ingestToken: String? = nil, app: String? = nil) {
        self.init(configuration: ReporterConfiguration(serverURL: serverURL, ingestToken: ingestToken, app: app))
    }

    /// `Task.sleep`, in seconds.
    public static let taskSleep: Sleep = { seconds in
        // Clamped so that a huge Retry-After cannot overflow the nanosecond count.
        try await Task.sleep(nanoseconds: UInt64(min(max(seconds, 0), 86_400) * 1_000_000_000))
    }

    /// Counts so far.
    public var statistics: ReporterStatistics {
        var s = stats
        s.buffered = buffer.count
        return s
    }

    /// Queues an event to be sent. Returns at once; never throws. An event that cannot be
    /// encoded (a NaN number; a channel management result naming an activity) is counted as
    /// rejected and logged.
    public func report(_ event: LiveActivityEvent) {
        stats.reported += 1
        guard !closed else {
            stats.dropped += 1
            log("dropped \(event.kind.rawValue) event \(event.id): the reporter is closed")
            return
        }
        var event = event
        if event.app == nil { event.app = configuration.app }
        let body: Data
        do {
            body = try encoder.encode(event)
        } catch {
            stats.rejected += 1
            log("rejected \(event.kind.rawValue) event \(event.id): it cannot be encoded (\(error))")
            return
        }
        // One event the buffer could not hold beside others, or the monitor could never take, is
        // rejected alone: appended, it would first push every buffered event out.
        guard body.count <= min(buffer.maxBytes, Self.largestEvent) else {
            stats.rejected += 1
            log("rejected \(event.kind.rawValue) event \(event.id): \(body.count) bytes encoded, "
                + "more than \(min(buffer.maxBytes, Self.largestEvent)) (maxBufferedBytes, or the monitor's 1 MiB request limit)")
            return
        }
        let dropped = buffer.append(EventBuffer.Entry(id: event.id, kind: event.kind.rawValue, body: body))
        if !dropped.isEmpty {
            stats.dropped += dropped.count
            log("buffer full (\(buffer.count) events, \(buffer.bytes) bytes): dropped \(dropped.count), first \(dropped[0].kind) \(dropped[0].id)")
        }
        if buffer.pendingCount >= batchLimit, let wait, wait.kind == .batching { wait.task.cancel() }
        startDriver()
    }

    /// The most events the monitor takes in one request.
    static let largestBatch = 1000

    /// The largest event reported: the monitor's default request limit (1 MiB), far above any
    /// event it takes (a content state or attributes at most 4 KiB, ids 128 bytes).
    static let largestEvent = 1 << 20

    /// Queues several events, in order.
    public func report(_ events: [LiveActivityEvent]) {
        for event in events { report(event) }
    }

    /// Sends everything buffered now, without waiting for the batch delay or the back-off after
    /// an attempt that got no answer (a timeout, a refused or dropped connection).
    ///
    /// Returns true when every event buffered at the call (and any reported while it waits)
    /// reached the monitor: stored, or already stored (a duplicate). Returns false when the
    /// buffer emptied but some of those events were given up: refused for good (a 401 or 403
    /// for a wrong token, a 413 for an event too large, a 422 for an invalid one, after which
    /// the valid rest of its batch is still sent; `statistics.rejected` and `lastRejection`
    /// say which) or dropped to make room. Returns false as soon as an attempt fails, too
    /// (with several `serverURLs`: one on each in a row); those events stay buffered
    /// (`statistics.buffered`) and are retried. With nothing buffered, returns true.
    ///
    /// While the reporter backs off after the monitor answered 408, 429, 500, 502, 503 or 504
    /// (waiting at least its `Retry-After`), returns false at once without sending: a caller
    /// flushing after every event would otherwise send a request per event to a monitor that
    /// asked for time. The events go when the back-off ends.
    ///
    /// Cancelling the calling task ends the wait at once, returning false; the reporter goes on
    /// sending in the background (an attempt under way is not cut off).
    @discardableResult
    public func flush() async -> Bool {
        guard !buffer.isEmpty, !closed else { return buffer.isEmpty }
        guard !Task.isCancelled else { return false }
        if let wait, wait.kind == .backoffAfterAnswer { return false }
        flushRequested = true
        wait?.task.cancel()
        startDriver()
        let id = nextFlushWaiter
        nextFlushWaiter += 1
        let givenUpBefore = givenUp
        return await withTaskCancellationHandler {
            await withCheckedContinuation { flushWaiters[id] = ($0, givenUpBefore) }
        } onCancel: {
            Task { await self.abandonFlush(id) }
        }
    }

    /// Sends everything buffered, retrying failures until the buffer is empty or
    /// `configuration.closeTimeout` (10 s by default) has passed, then stops sending:
    /// `close(within: configuration.closeTimeout)`. Events still buffered then are dropped
    /// (counted in `statistics.dropped`, and logged); events reported later are dropped too.
    /// Cancelling the calling task brings the deadline forward to now, as for `close(within:)`.
    public func close() async {
        await close(within: configuration.closeTimeout)
    }

    /// Sends everything buffered, retrying failures with the usual back-off (at least each
    /// `Retry-After`) until the buffer is empty or `seconds` have passed, then stops sending:
    /// for a backend's shutdown, so that a monitor restarting meanwhile (503 for a few seconds)
    /// costs nothing. No wait goes past the deadline; after a wait cut short by it, one last
    /// attempt is made. An attempt under way is not cut off, so this can return up to
    /// `requestTimeout` after the deadline. Events still buffered then are dropped (counted in
    /// `statistics.dropped`, and logged); events reported later are dropped too.
    ///
    /// Time is what the reporter's `sleep` was asked to wait plus how long its attempts took.
    /// A negative or NaN `seconds` is 0: one attempt.
    ///
    /// Cancelling the calling task brings the deadline forward to now: a back-off under way is
    /// cut short and followed by one last attempt, an attempt under way ends with its answer
    /// (or `requestTimeout`) and is not retried; then the rest is dropped as above. A task
    /// cancelled before the call makes one attempt.
    public func close(within seconds: TimeInterval) async {
        if !closed, !buffer.isEmpty {
            closeBudget = min(closeBudget ?? .infinity, seconds > 0 && !Task.isCancelled ? seconds : 0)
            flushRequested = true
            wait?.task.cancel()
            startDriver()
        }
        await withTaskCancellationHandler {
            // Also outwaits a batch still in flight after an earlier `close()`.
            while let driver { await driver.value }
        } onCancel: {
            Task { await self.closeNow() }
        }
        closed = true
        closeBudget = nil
        driver?.cancel()
        wait?.task.cancel()
        let left = buffer.removeAll()
        if !left.isEmpty {
            stats.dropped += left.count
            log("closed with \(left.count) event(s) unsent after \(seconds) s: dropped \(left.count), first \(left[0].kind) \(left[0].id)")
        }
        finishFlushes(false)
    }

    // MARK: - Sending

    private enum Outcome {
        /// Answered (whatever the answer); go on with the next batch.
        case answered
        /// Not answered (`answered` false), or answered 408, 429, 500, 502, 503 or 504: wait,
        /// then send the same events again.
        case retry(after: TimeInterval?, answered: Bool)
    }

    private enum WaitKind {
        /// For more events to fill a batch: a full batch or `flush()` cuts it short.
        case batching
        /// After an attempt without an answer: `flush()` cuts it short (the network may be back).
        case backoffAfterNoAnswer
        /// After the monitor (or a proxy) answered it is unwell or busy: only `close` cuts it
        /// short.
        case backoffAfterAnswer
    }

    private func startDriver() {
        guard driver == nil, !buffer.isEmpty, !closed, (closeBudget ?? 1) > 0 else { return }
        driver = Task { await self.drive() }
    }

    private func drive() async {
        var behind = false
        drive: while !buffer.isEmpty, !closed {
            // Full batches go at once; a partial one waits for company, up to `batchDelay`
            // (unless flushing or closing).
            var drain = behind || flushRequested || closeBudget != nil
            if !drain, buffer.pendingCount < batchLimit {
                drain = await pause(configuration.batchDelay, kind: .batching)
                if closed { break }
            }
            behind = false
            let started = Self.uptime()
            let outcome = await sendPending(drain: drain)
            spend(Self.uptime() - started)
            switch outcome {
            case .answered:
                failures = 0
                if buffer.isEmpty { finishFlushes(true) }
            case .retry(let retryAfter, let answered):
                failures += 1
                finishFlushes(false)
                var delay = configuration.retry.delay(afterFailures: failures, random: random(), retryAfter: retryAfter)
                let closing = closeBudget != nil
                if let budget = closeBudget {
                    // Closing: past the deadline, stop; before it, never wait beyond it.
                    guard budget > 0 else { break drive }
                    delay = min(delay, budget)
                }
                let started = Self.uptime()
                let waitedInFull = await pause(delay, kind: answered ? .backoffAfterAnswer : .backoffAfterNoAnswer)
                if closing { spend(waitedInFull ? delay : Self.uptime() - started) }
                behind = true
            }
        }
        driver = nil
        finishFlushes(buffer.isEmpty)
    }

    /// Sends full batches, and with `drain` (or once `flush()` asks) the partial rest too, until
    /// that is done or an attempt needs a retry.
    private func sendPending(drain: Bool) async -> Outcome {
        while !closed, buffer.pendingCount >= batchLimit || ((drain || flushRequested) && buffer.pendingCount > 0) {
            let batch = buffer.takeBatch(maxEvents: batchLimit, maxBytes: configuration.maxBatchBytes)
            let outcome = await send(batch)
            if case .retry(let retryAfter, let answered) = outcome {
                round.failed += 1
                round.answered = round.answered || answered
                if let retryAfter { round.retryAfter = max(round.retryAfter ?? 0, retryAfter) }
                failOver(batch.count)
                // The next URL gets the batch at once, until every URL failed in a row.
                if round.failed < configuration.serverURLs.count { continue }
                let full = round
                round = (0, false, nil)
                return .retry(after: full.retryAfter, answered: full.answered)
            }
            // Answered: the batches after this one are not retries, and a later failure starts
            // the back-off from its first step.
            failures = 0
            round = (0, false, nil)
        }
        if buffer.isEmpty { flushRequested = false }
        return .answered
    }

    private func send(_ batch: [EventBuffer.Entry]) async -> Outcome {
        var body = Data("[".utf8)
        for (i, entry) in batch.enumerated() {
            if i > 0 { body.append(UInt8(ascii: ",")) }
            body.append(entry.body)
        }
        body.append(UInt8(ascii: "]"))
        var headers = ["Content-Type": "application/json"]
        if let token = configuration.ingestToken { headers["Authorization"] = "Bearer " + token }
        let request = TransportRequest(url: configuration.ingestURL(current), headers: headers, body: body,
                                       timeout: configuration.requestTimeout)
        stats.requests += 1
        if failures > 0 || round.failed > 0 { stats.retries += 1 }

        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch {
            buffer.release()
            log("sending \(batch.count) event(s) failed (\(error)); they will be sent again")
            return .retry(after: nil, answered: false)
        }
        let outcome = handle(response, batch)
        forgetSettledShrinks()
        return outcome
    }

    private func handle(_ response: TransportResponse, _ batch: [EventBuffer.Entry]) -> Outcome {
        switch response.status {
        case 200..<300:
            let counts = IngestAnswer.counts(response.body)
            if counts == nil, !warnedAboutForeignAnswer {
                // The monitor always answers {"accepted", "duplicates"}: something else took
                // the request (a proxy's or portal's page), and the events may be nowhere.
                warnedAboutForeignAnswer = true
                log("\(configuration.ingestURL(current)) answered \(response.status) without the monitor's summary "
                    + "(\(IngestAnswer.message(response.body))): is it the monitor? Counted as accepted")
            }
            stats.accepted += counts?.accepted ?? batch.count
            stats.duplicates += counts?.duplicates ?? 0
            buffer.complete()
            regrowBatchLimit()
            return .answered
        case 422:
            let problems = IngestAnswer.problems(response.body).filter { $0.index >= 0 && $0.index < batch.count }
            let invalid = Set(problems.map(\.index))
            for problem in problems {
                let entry = batch[problem.index]
                log("the monitor rejected \(entry.kind) event \(entry.id): \(problem.field): \(problem.error)")
            }
            if invalid.isEmpty {
                reject(batch, response)
            } else {
                // The monitor stores a request whole or not at all: the valid rest go again.
                stats.rejected += invalid.count
                let first = problems[0]
                stats.lastRejection = ReporterStatistics.Rejection(
                    status: 422, message: "\(batch[first.index].id): \(first.field): \(first.error)", events: invalid.count)
                buffer.complete(removing: invalid)
            }
            return .answered
        case 413 where batch.count > 1:
            shrinks.append((batchLimit, batch[batch.count - 1].seq))
            batchLimit = max(1, batch.count / 2)
            acceptedAtLimit = 0
            buffer.release()
            log("the monitor refused a batch of \(batch.count) events as too large; sending at most \(batchLimit) per request for now (maxBatchEvents and maxBatchBytes set the most)")
            return .answered
        case 413:
            // One event alone is too large: it would be refused every time, and the 413s of the
            // batches that held it were its fault, not their size's.
            restoreBatchLimit(refusedAlone: batch[0])
            reject(batch, response)
            return .answered
        case _ where Self.retryableStatuses.contains(response.status):
            // 408 and 429 come from a proxy or load balancer in front of the monitor (which
            // sends neither): a timeout and a "not so fast", both worth another try; so are a
            // failing server (500), a gateway without a healthy monitor behind it (502, 504)
            // and a monitor restarting (503).
            buffer.release()
            let retryAfter = response.headers["retry-after"].flatMap { RetryAfter.seconds($0) }
            log("the monitor answered \(response.status) (\(IngestAnswer.message(response.body))); \(batch.count) event(s) will be sent again")
            return .retry(after: retryAfter, answered: true)
        default:
            // Any other answer (400, 401, 403, 404, 415, 501, 505, …) would be the same for
            // the same request: sending it again only adds load.
            reject(batch, response)
            return .answered
        }
    }

    /// After a failed attempt: the next of several URLs takes the batch (round robin), logged
    /// once per switch. With one URL, nothing to do.
    private func failOver(_ events: Int) {
        let urls = configuration.serverURLs
        guard urls.count > 1 else { return }
        let next = (current + 1) % urls.count
        stats.failovers += 1
        let when = round.failed < urls.count ? "now" : "after a back-off (every URL failed in a row)"
        log("failing over from \(urls[current]) to \(urls[next]): \(events) event(s) go there \(when)")
        current = next
    }

    /// After a 413 lowered the batch size: doubles it again once `regrowAfter` batches in a row
    /// were accepted, so that one oversized batch does not throttle the reporter for good.
    private func regrowBatchLimit() {
        guard batchLimit < fullBatchLimit else { return }
        acceptedAtLimit += 1
        guard acceptedAtLimit >= Self.regrowAfter else { return }
        batchLimit = min(fullBatchLimit, batchLimit * 2)
        acceptedAtLimit = 0
        log("\(Self.regrowAfter) batches accepted in a row: sending up to \(batchLimit) events per request again")
    }

    /// A single event was refused as too large: the halvings caused by the 413s of batches that
    /// held it are undone (the batch size returns to the largest before them), so that one
    /// oversized event does not leave everyone else's events going one per request. A 413 of a
    /// batch without it stays: that limit is real.
    private func restoreBatchLimit(refusedAlone event: EventBuffer.Entry) {
        let explained = shrinks.filter { event.seq <= $0.through }
        shrinks.removeAll { event.seq <= $0.through }
        guard let before = explained.map(\.limitBefore).max(), before > batchLimit else { return }
        log("\(event.kind) event \(event.id) alone is larger than the monitor takes; sending up to \(before) events per request again")
        batchLimit = before
        acceptedAtLimit = 0
    }

    /// Forgets the 413s whose batches have left the buffer: no event of theirs can be refused
    /// alone any more, so the limits they set stand (and grow back as usual).
    private func forgetSettledShrinks() {
        guard !shrinks.isEmpty else { return }
        let first = buffer.firstSeq ?? .max
        shrinks.removeAll { $0.through < first }
    }

    /// The answers worth sending the same request again for; every other answer is final.
    static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Drops a whole batch the monitor refused: sending it again would be refused again.
    private func reject(_ batch: [EventBuffer.Entry], _ response: TransportResponse) {
        let message = IngestAnswer.message(response.body)
        stats.rejected += batch.count
        stats.lastRejection = ReporterStatistics.Rejection(status: response.status, message: message, events: batch.count)
        buffer.complete()
        let hint = switch response.status {
        case 401, 403: " (check the ingest token)"
        case 404: " (check the server URL)"
        case 413: " (one event larger than the monitor's request limit: never sent again)"
        case 300..<400: " (a redirect the transport did not follow: check the server URL)"
        case 415: " (a proxy changed the request?)"
        case 500..<600: " (not retried: sending the same request again would get the same answer)"
        default: ""
        }
        log("the monitor answered \(response.status)\(hint): \(message); dropped \(batch.count) event(s), first \(batch[0].kind) \(batch[0].id)")
    }

    /// Waits, unless cut short by `close()`, `flush()` (but not a back-off after an answer) or,
    /// while batching, a full batch.
    /// Returns true when the whole time passed.
    private func pause(_ seconds: TimeInterval, kind: WaitKind) async -> Bool {
        guard seconds > 0, !closed else { return !closed }
        let sleep = self.sleep
        let logLine: @Sendable (String) -> Void = { [configuration] in configuration.log?($0) }
        let task = Task {
            do {
                try await sleep(seconds)
            } catch is CancellationError {
                // Cut short on purpose: send now.
            } catch {
                logLine("the sleep function failed (\(error)); continuing at once")
            }
        }
        wait = (task, kind)
        await task.value
        wait = nil
        return !task.isCancelled
    }

    /// The task of a `close` was cancelled: its deadline is now. A back-off under way ends, and
    /// the driver makes its last attempt as when the deadline cuts a wait short.
    private func closeNow() {
        guard closeBudget != nil else { return }
        closeBudget = 0
        wait?.task.cancel()
    }

    /// Counts time against `close(within:)`'s deadline, while it runs.
    private func spend(_ seconds: TimeInterval) {
        if let budget = closeBudget { closeBudget = budget - seconds }
    }

    /// Monotonic seconds, for timing attempts.
    private static func uptime() -> TimeInterval { ProcessInfo.processInfo.systemUptime }

    /// Events `report` took and the reporter gave up: refused by the monitor, impossible to
    /// encode, or dropped.
    private var givenUp: Int { stats.rejected + stats.dropped }

    /// Ends the waiting `flush()` calls: each returns true if the buffer `drained` and no event
    /// was given up since it began.
    private func finishFlushes(_ drained: Bool) {
        let waiters = flushWaiters
        flushWaiters = [:]
        for waiter in waiters.values {
            waiter.continuation.resume(returning: drained && givenUp == waiter.givenUpBefore)
        }
    }

    /// The task of a `flush()` was cancelled: it returns false now (if it has not returned yet).
    private func abandonFlush(_ id: Int) {
        flushWaiters.removeValue(forKey: id)?.continuation.resume(returning: false)
    }

    private func log(_ line: String) {
        configuration.log?(line)
    }
}
