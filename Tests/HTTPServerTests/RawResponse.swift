/// A response as read off the wire by ``RawConnection``; header names lowercased.
struct RawResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// Every value of header `name`, in order.
    func values(_ name: String) -> [String] {
        headers.filter { $0.name == name.lowercased() }.map(\.value)
    }

    /// The single value of header `name`, or nil if absent.
    func header(_ name: String) -> String? {
        values(name).first
    }
}
