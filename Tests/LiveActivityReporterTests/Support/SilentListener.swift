import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP listener on 127.0.0.1 that accepts every connection and never answers: a monitor
/// hung after `accept` (stopped in a debugger, deadlocked). Clients wait until their own
/// timeout ends the attempt.
final class SilentListener: Sendable {
    let port: Int
    private let listener: Int32
    /// Accepted connections, held open (and never read) until `stop()`.
    private let accepted = Mutex<[Int32]>([])

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw Failure(description: "bind/listen: errno \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            while true {
                let connection = accept(fd, nil, nil)
                if connection < 0 { return }   // the listener was shut down
                accepted.withLock { $0.append(connection) }
            }
        }
        thread.start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Closes the listener (ending the accept loop) and every accepted connection.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for connection in accepted.withLock({ $0 }) { close(connection) }
    }
}
