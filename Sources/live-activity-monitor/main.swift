import Foundation
import LiveActivityMonitor

// Everything is wired in LiveActivityMonitor (shared with the tests); this only runs it.
exit(CommandLineTool.run(CommandLine.arguments))
