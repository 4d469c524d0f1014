import JSON

/// Turns an ingest request body into validated events: JSON (one object or an array) or NDJSON.
/// Either every event is valid, or the error names every invalid one.
public struct IngestDecoder: Sendable {
    public var maxEvents = 1000
    public var limits = JSONParser.Limits()

    public init() {}

    public enum Format: Sendable { case json, ndjson }

    /// The body format for a Content-Type header, or nil when it is not one we take.
    public static func format(contentType: String?) -> Format? {
        guard let contentType else { return nil }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first?
            .trimmingCharacters(in: " \t").lowercased()
        switch mediaType {
        case "application/json": return .json
        case "application/x-ndjson", "application/ndjson", "application/jsonl": return .ndjson
        default: return nil
        }
    }

    public func decode(_ body: [UInt8], format: Format) throws(APIError) -> [Event] {
        let values = try parse(body, format: format)
        guard !values.isEmpty else { throw .badRequest("the request holds no events") }
        guard values.count <= maxEvents else {
            throw .payloadTooLarge("\(values.count) events in one request; at most \(maxEvents)")
        }
        var events: [Event] = []
        events.reserveCapacity(values.count)
        var errors: [FieldError] = []
        for (index, value) in values.enumerated() {
            switch EventValidator.validate(value, index: index) {
            case .valid(let event): events.append(event)
            case .invalid(let problems): errors += problems
            }
        }
        guard errors.isEmpty else { throw .invalidEvents(errors) }
        return events
    }

    private func parse(_ body: [UInt8], format: Format) throws(APIError) -> [JSONValue] {
        switch format {
        case .json:
            let value: JSONValue
            do { value = try JSONParser.parse(body, limits: limits) } catch {
                throw .badRequest("body is not valid JSON: \(error.message) at line \(error.line), column \(error.column)")
            }
            if case .array(let items) = value { return items }
            return [value]
        case .ndjson:
            var values: [JSONValue] = []
            for (line, result) in JSONParser.parseLines(body, limits: limits) {
                switch result {
                case .success(let value): values.append(value)
                case .failure(let error):
                    throw .badRequest("line \(line) is not valid JSON: \(error.message) at column \(error.column)")
                }
                if values.count > maxEvents { break }
            }
            return values
        }
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = self[...]
        while let f = s.first, chars.contains(f) { s = s.dropFirst() }
        while let l = s.last, chars.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
