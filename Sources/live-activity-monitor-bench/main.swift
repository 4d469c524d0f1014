import Foundation
import LiveActivityMonitor

// `live-activity-monitor-bench [--quick] [options]` runs the benchmark (BenchOptions.usage).
// The bench starts itself again as the servers it measures, each in its own process so that
// its memory and start-up are its own: `serve …` is exactly `live-activity-monitor serve …`,
// `http-baseline` is our HTTPServer answering a fixed 200 (HTTPBaseline), `library-baseline`
// libmicrohttpd alone doing the same, the HTTP limit (LibraryBaseline).
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "serve":
    exit(CommandLineTool.run(["live-activity-monitor"] + arguments))
case "http-baseline":
    exit(HTTPBaseline.run())
case "library-baseline":
    exit(LibraryBaseline.run())
default:
    exit(BenchRunner.run(arguments))
}
