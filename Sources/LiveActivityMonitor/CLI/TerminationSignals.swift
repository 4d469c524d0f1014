import Dispatch
import Foundation
import Synchronization

/// SIGTERM and SIGINT, handled on a dispatch queue: never in a signal handler, never on a
/// libmicrohttpd thread. Install before starting a server (from then on the signals no longer
/// kill the process); `wait()` returns at the first one. A second one, while the server is
/// stopping, ends the process at once: a stop can take the grace period and more, and an
/// operator pressing Ctrl-C again wants out. Nothing acknowledged is lost that way (SQLite's
/// log keeps every commit; it is folded into the file at the next start). SIGPIPE is ignored
/// too: a log reader that went away (a closed stderr pipe) must not stop the server.
public final class TerminationSignals {
    private let stop = DispatchSemaphore(value: 0)
    private let received = Atomic(0)
    private var sources: [DispatchSourceSignal] = []

    /// `onRepeat` runs on the second signal, just before the process exits with 128 + its number.
    public init(onRepeat: @escaping @Sendable (Int32) -> Void = { _ in }) {
        signal(SIGPIPE, SIG_IGN)
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                if received.add(1, ordering: .relaxed).newValue == 1 {
                    stop.signal()
                    return
                }
                onRepeat(sig)
                // `_exit`, not `exit`: other threads are running, and atexit handlers and
                // static destructors would race them.
                _exit(128 + sig)
            }
            source.resume()
            sources.append(source)
        }
    }

    public func wait() {
        stop.wait()
    }

    /// Ends `wait()` as a first signal would, for a stop the process decides itself (a
    /// replica that lost the lead).
    public var interrupt: @Sendable () -> Void {
        let stop = stop
        return { stop.signal() }
    }
}
