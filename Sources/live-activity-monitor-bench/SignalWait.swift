import Dispatch
import Foundation

/// Blocks until SIGTERM or SIGINT, handled on a dispatch queue (never in a signal handler).
enum SignalWait {
    static func untilTerminated() {
        let stop = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            sources.append(source)
        }
        stop.wait()
        sources.forEach { $0.cancel() }
    }
}
