/// Placeholder until the demo generator lands.
final class DemoTraffic: Sendable {
    static func start(baseURL: String, token: String?, ratePerMinute: Double) -> DemoTraffic { DemoTraffic() }
    func stop() {}
}
