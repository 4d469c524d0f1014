import Testing
@testable import Prometheus

@Test func placeholderPrometheus() {}
