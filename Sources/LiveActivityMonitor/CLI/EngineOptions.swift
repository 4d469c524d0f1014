/// The flags the rules depend on (`EngineSettings`): `serve` judges with them, and `history`
/// replays with them, so that its file says what the server's answers say. Each reads the same
/// environment variable in both, so a `history` run beside the server's unit gets its values.
enum EngineOptions {
    static let options: [ArgumentParser.Option] = [
        .init(name: "priority10-budget", environment: "LAM_PRIORITY10_BUDGET", valueName: "N",
              help: "Priority-10 pushes per activity per hour above which it is heavy, 0 to 100000 (default 15)."),
        .init(name: "delivery-grace", environment: "LAM_DELIVERY_GRACE", valueName: "AGE",
              help: "How long after an applied 200 push an activity.observed that still shows older content marks it missed (120s, 2m; 1s to 1d; default 120s)."),
        .init(name: "start-window", environment: "LAM_START_WINDOW", valueName: "AGE",
              help: "How long after a 200 start push its activity.started (source push_to_start, same booking and type) makes it started; then it is not_started (15m, 900s; 1s to 1d; default 15m)."),
    ]

    static func settings(_ parsed: ArgumentParser.Parsed) throws -> EngineSettings {
        var settings = EngineSettings()
        settings.priority10Budget = try CommandLineTool.integer(parsed, "priority10-budget", range: 0...100_000) ?? settings.priority10Budget
        settings.deliveryGrace = try window(parsed, "delivery-grace", example: "120s or 2m") ?? settings.deliveryGrace
        settings.startWindow = try window(parsed, "start-window", example: "15m or 900s") ?? settings.startWindow
        return settings
    }

    /// A duration flag of the rules (`--delivery-grace`, `--start-window`): 1 s to 1 day.
    private static func window(_ parsed: ArgumentParser.Parsed, _ name: String, example: String) throws -> Double? {
        guard let text = parsed.values[name] else { return nil }
        guard let seconds = CommandLineTool.duration(text), (1...86_400).contains(seconds) else {
            throw UsageError("\(parsed.source(name)) must be a duration from 1s to 1d such as \(example), not '\(text)'")
        }
        return seconds
    }
}
