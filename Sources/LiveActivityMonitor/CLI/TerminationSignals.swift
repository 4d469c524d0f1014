import Dispatch
import Foundation

/// SIGTERM and SIGINT, handled on a dispatch queue: never in a signal handler, never on a
/// libmicrohttpd thread. Install before starting a server (from then on the signals no longer
/// kill the process); `wait()` returns at the first one. Later ones stay ignored. SIGPIPE is
/// ignored too: a log reader that went away (a closed stderr pipe) must not stop the server.
public final class TerminationSignals {
    private let stop = DispatchSemaphore(value: 0)
    private var sources: [DispatchSourceSignal] = []

    public init() {
        signal(SIGPIPE, SIG_IGN)
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [stop] in stop.signal() }
            source.resume()
            sources.append(source)
        }
    }

    public func wait() {
        stop.wait()
        sources.forEach { $0.cancel() }
    }
}
