import CMicroHTTPD

/// libmicrohttpd responses made once and queued again for identical small answers, kept by
/// each polling thread (in ``WorkerThread``, so without a lock).
///
/// Making a response copies its body and allocates every header (the default headers
/// included) and frees them all after the send; a server answers most requests with a few
/// identical small answers (`{"accepted":1,"duplicates":0}`, a refusal), and libmicrohttpd's
/// responses are reference counted and may be queued any number of times, by any connection.
/// An entry is found by everything the response is made of: status, the handler's headers,
/// body, and whether `Connection: close` is added. The default headers are not part of the
/// key: a polling thread belongs to one daemon, whose defaults never change. Only bodies of
/// at most ``maxBodyBytes`` are kept (a comparison costs less than a copy), ``capacity`` per
/// thread, the oldest replaced first.
final class ResponseCache {
    static let capacity = 8
    static let maxBodyBytes = 512

    private struct Entry {
        let status: Int
        let closes: Bool
        let headers: [(name: String, value: String)]
        let body: [UInt8]
        /// Holds one reference (`MHD_create_response_*`), given back when the entry goes.
        let response: OpaquePointer

        func matches(status: Int, closes: Bool, headers: [(name: String, value: String)], body: [UInt8]) -> Bool {
            self.status == status && self.closes == closes && self.body == body
                && self.headers.count == headers.count
                && zip(self.headers, headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
        }
    }

    private var entries: [Entry] = []
    private var oldest = 0

    /// The response kept for this answer, or nil.
    func response(status: Int, closes: Bool, headers: [(name: String, value: String)], body: [UInt8]) -> OpaquePointer? {
        guard body.count <= Self.maxBodyBytes else { return nil }
        return entries.first { $0.matches(status: status, closes: closes, headers: headers, body: body) }?.response
    }

    /// Keeps `response` (taking over the caller's reference) if the answer is small enough;
    /// false, taking nothing, otherwise: the caller then destroys it after queuing it.
    func keep(_ response: OpaquePointer, status: Int, closes: Bool, headers: [(name: String, value: String)],
              body: [UInt8]) -> Bool {
        guard body.count <= Self.maxBodyBytes else { return false }
        let entry = Entry(status: status, closes: closes, headers: headers, body: body, response: response)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            // A connection still sending the replaced response holds its own reference.
            MHD_destroy_response(entries[oldest].response)
            entries[oldest] = entry
            oldest = (oldest + 1) % Self.capacity
        }
        return true
    }

    deinit {
        for entry in entries { MHD_destroy_response(entry.response) }
    }
}
