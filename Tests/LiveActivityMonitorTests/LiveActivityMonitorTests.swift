import Testing
@testable import LiveActivityMonitor

@Test func placeholderLiveActivityMonitor() {}
