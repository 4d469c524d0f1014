// swift-tools-version:6.0
// Live Activity Monitor: observability for iOS Live Activities (see README.md).
// No outside packages: the toolchain plus Debian's C libraries as system library targets.
import PackageDescription

let package = Package(
    name: "live-activity-monitor",
    products: [
        .executable(name: "live-activity-monitor", targets: ["live-activity-monitor"]),
        .executable(name: "live-activity-monitor-bench", targets: ["live-activity-monitor-bench"]),
        .library(name: "LiveActivityReporter", targets: ["LiveActivityReporter"]),
    ],
    targets: [
        // C libraries from Debian, found with pkg-config.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CPostgreSQL", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),

        // Thin wrappers: the only modules that import C.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        .target(name: "SQLiteDB", dependencies: ["CSQLite3"]),
        .target(name: "Hashing", dependencies: ["CCrypto"]),
        .target(name: "PostgresDB", dependencies: ["CPostgreSQL"]),

        // Pure Swift building blocks.
        .target(name: "Prometheus"),
        .target(name: "JSON"),
        // The wire's vocabulary, shared by the monitor and the reporter: event types, the
        // enumerated fields' values and the RFC 3339 date form.
        .target(name: "LiveActivityWire"),

        // The domain.
        .target(name: "LiveActivityMonitor",
                dependencies: ["HTTPServer", "SQLiteDB", "PostgresDB", "Hashing", "Prometheus", "JSON", "LiveActivityWire"]),
        .executableTarget(name: "live-activity-monitor", dependencies: ["LiveActivityMonitor"]),
        // Benchmarks against the HTTP, storage and Pushgateway baselines (README, Performance).
        .executableTarget(name: "live-activity-monitor-bench",
                          dependencies: ["LiveActivityMonitor", "HTTPServer", "CMicroHTTPD", "CSQLite3", "SQLiteDB", "PostgresDB", "JSON", "LiveActivityWire",
                                         // PostgresCluster: the private cluster of the postgres phase.
                                         "TestSupport"]),

        // libFuzzer target over the ingest decoder and validator: Tests/fuzz.sh builds it with
        // -sanitize=fuzzer,address; a plain build replays inputs (`ingest-fuzzer FILE|DIR…`).
        .executableTarget(name: "ingest-fuzzer", dependencies: ["LiveActivityMonitor", "JSON", "LiveActivityWire"]),

        // Client library for apps and backends: Foundation and LiveActivityWire only, builds on
        // Linux and Apple platforms.
        .target(name: "LiveActivityReporter", dependencies: ["LiveActivityWire"], exclude: ["INTEGRATION.md"]),

        // What the test targets share: raw connections, locks, promtool, the live-server fixture.
        // A plain target (no `import Testing`): helpers answer statuses and throw, the tests expect.
        .target(name: "TestSupport", dependencies: ["LiveActivityMonitor", "HTTPServer", "JSON", "PostgresDB", "LiveActivityWire"],
                path: "Tests/TestSupport"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "SQLiteDBTests", dependencies: ["SQLiteDB", "CSQLite3"]),
        .testTarget(name: "PostgresDBTests", dependencies: ["PostgresDB", "TestSupport"]),
        .testTarget(name: "PrometheusTests", dependencies: ["Prometheus", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "LiveActivityMonitorTests",
                    dependencies: ["LiveActivityMonitor", "LiveActivityWire", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        // The benchmark's own computations (how its figures are counted).
        .testTarget(name: "BenchTests", dependencies: ["live-activity-monitor-bench"]),
        .testTarget(name: "LiveActivityReporterTests",
                    dependencies: ["LiveActivityReporter", "LiveActivityWire", "LiveActivityMonitor", "HTTPServer", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
