import Foundation

/// The bench's entry point: checks the tools, runs every phase, prints the table, writes the JSON.
enum BenchRunner {
    /// This binary, started again for the server modes.
    static let executablePath: String = {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }()

    /// The package root, found from this source file (the bench runs from a checkout).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(BenchOptions.usage, terminator: "")
            return 0
        }
        let options: BenchOptions
        do { options = try BenchOptions(arguments) } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 2
        }
        for tool in [Wrk.path, Pushgateway.path] where !FileManager.default.isExecutableFile(atPath: tool) {
            FileHandle.standardError.write(Data("\(tool) is missing: run Tests/install-dependencies.sh bench\n".utf8))
            return 1
        }
        let results = Results(options: options, machine: Machine())
        let benchmark: Benchmark
        do { benchmark = try Benchmark(options: options, results: results) } catch {
            FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
            return 1
        }
        defer { benchmark.cleanUp() }
        do {
            try benchmark.run()
        } catch {
            FileHandle.standardError.write(Data("bench failed: \(error)\n".utf8))
            return 1
        }
        print(results.table())
        let path = options.output ?? packageRoot + "/.build/bench/" + (options.quick ? "results-quick.json" : "results.json")
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try results.json().write(toFile: path, atomically: true, encoding: .utf8)
            print("results written to \(path)")
        } catch {
            FileHandle.standardError.write(Data("cannot write \(path): \(error)\n".utf8))
            return 1
        }
        return 0
    }
}
