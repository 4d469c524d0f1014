import Foundation

/// Reads the monitor's answers to `POST /v1/events` (DESIGN.md section 3).
enum IngestAnswer {
    /// One entry of a 422's `errors`.
    struct Problem: Decodable {
        var index: Int
        var field: String
        var error: String
    }

    private struct Counts: Decodable {
        var accepted: Int
        var duplicates: Int
    }

    private struct Problems: Decodable {
        var errors: [Problem]
    }

    private struct Message: Decodable {
        var error: String
    }

    /// `{"accepted": n, "duplicates": d}` of a 200.
    static func counts(_ body: Data) -> (accepted: Int, duplicates: Int)? {
        guard let counts = try? JSONDecoder().decode(Counts.self, from: body) else { return nil }
        return (counts.accepted, counts.duplicates)
    }

    /// The `errors` of a 422; empty when the body is not of that form.
    static func problems(_ body: Data) -> [Problem] {
        (try? JSONDecoder().decode(Problems.self, from: body))?.errors ?? []
    }

    /// The `error` of any other answer, or the start of the body.
    static func message(_ body: Data) -> String {
        if let message = try? JSONDecoder().decode(Message.self, from: body) { return message.error }
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return text.isEmpty ? "no body" : text
    }
}
