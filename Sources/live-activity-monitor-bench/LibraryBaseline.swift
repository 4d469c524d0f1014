import CMicroHTTPD
import Foundation
import HTTPServer
import LiveActivityMonitor

/// The HTTP limit: libmicrohttpd itself, in C terms, with nothing of ours in between: the
/// daemon the monitor runs (`MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL`, a thread pool of
/// the same size, the same connection timeout), answering every request with one fixed 200
/// made once (the same body and headers as `HTTPBaseline`'s, so that only the work per request
/// differs), queued on the access handler's final call as ours is (on the first, 0.9.75 drops
/// keep-alive). The body, if any, is read and thrown away.
enum LibraryBaseline {
    /// Serves on a free port until SIGTERM; logs the port like `serve` does.
    static func run() -> Int32 {
        let signals = TerminationSignals()
        let monitor = MonitorConfiguration()
        let body = HTTPBaseline.body
        guard let response = body.withUnsafeBytes({ bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }) else { return 1 }
        _ = MHD_add_response_header(response, "Content-Type", "application/json")
        for header in MonitorServer.securityHeaders { _ = MHD_add_response_header(response, header.name, header.value) }
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
        let threads = monitor.httpThreads
        let options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: monitor.connectionTimeoutSeconds, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: monitor.maxConnections * threads, ptr_value: nil),
            MHD_OptionItem(option: .THREAD_POOL_SIZE, value: threads, ptr_value: nil),
            MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
        ]
        HTTPServer.raiseDescriptorLimitForBench(monitor.maxConnections)
        let daemon = options.withUnsafeBufferPointer { items in
            CMicroHTTPD_start_daemon(flags, 0, nil, libraryAnswer, UnsafeMutableRawPointer(response), items.baseAddress)
        }
        guard let daemon else {
            FileHandle.standardError.write(Data("library-baseline: libmicrohttpd could not start\n".utf8))
            return 1
        }
        FileHandle.standardError.write(Data("library-baseline listening on http://127.0.0.1:\(CMicroHTTPD_bind_port(daemon))\n".utf8))
        signals.wait()
        MHD_stop_daemon(daemon)
        MHD_destroy_response(response)
        return 0
    }
}

/// The access handler: first call (headers) nothing, body pieces dropped, final call queues the
/// one response. `cls` is the response; `*context` marks the first call done.
private func libraryAnswer(cls: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
                           method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                           uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>?,
                           context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let context, let uploadDataSize else { return .NO }
    if context.pointee == nil {
        context.pointee = cls
        return .YES
    }
    if uploadDataSize.pointee > 0 {
        uploadDataSize.pointee = 0
        return .YES
    }
    return MHD_queue_response(connection, 200, OpaquePointer(cls))
}
