import Testing
@testable import LiveActivityMonitor

@Suite struct LogThrottleTests {
    @Test func passesTheLimitPerWindowThenSaysHowManyItLeftOut() {
        let (clock, time) = Clock.manual(1000)
        let written = LogLines()
        let throttle = LogThrottle(limit: 3, interval: 60, clock: clock) { written.append($0) }
        for i in 0..<10 { throttle("refused \(i)") }
        #expect(written.value == ["refused 0", "refused 1", "refused 2"])
        time.advance(by: 59)
        throttle("still the same minute")
        #expect(written.value.count == 3)
        time.advance(by: 1)
        throttle("next minute")
        #expect(written.value.suffix(2) == ["(8 more message(s) of the previous 60 s were left out of the log)", "next minute"])
        time.advance(by: 60)
        throttle("quiet minute before")
        #expect(written.value.last == "quiet minute before", "nothing was left out, nothing to report")
        #expect(written.value.count == 6)
    }

    @Test func flushSaysWhatTheCurrentWindowLeftOut() {
        let (clock, _) = Clock.manual(1000)
        let written = LogLines()
        let throttle = LogThrottle(limit: 1, interval: 60, clock: clock) { written.append($0) }
        throttle.flush()
        #expect(written.value.isEmpty)
        for i in 0..<4 { throttle("refused \(i)") }
        throttle.flush()
        throttle.flush()
        #expect(written.value == ["refused 0", "(3 more message(s) were left out of the log)"])
    }
}
