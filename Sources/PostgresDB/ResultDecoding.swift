internal import CPostgreSQL

/// Copies a libpq result into Swift values: each column typed by its type's OID.
enum ResultDecoding {
    static func decode(_ result: OpaquePointer) -> PostgresResult {
        let rowCount = PQntuples(result), columnCount = PQnfields(result)
        let columns = (0..<columnCount).map { PQfname(result, $0).map { String(cString: $0) } ?? "" }
        let types = (0..<columnCount).map { PQftype(result, $0) }
        var rows: [[PostgresValue]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [PostgresValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) == 1 {
                    values.append(.null)
                    continue
                }
                let count = Int(PQgetlength(result, row, column))
                let text = PQgetvalue(result, row, column).map {
                    String(decoding: UnsafeRawBufferPointer(start: $0, count: count), as: UTF8.self)
                } ?? ""
                values.append(value(text, type: types[Int(column)]))
            }
            rows.append(values)
        }
        let affected = PQcmdTuples(result).map { Int(String(cString: $0)) ?? 0 } ?? 0
        return PostgresResult(columns: columns, rows: rows, affectedRows: affected)
    }

    /// Built-in type OIDs (pg_type.h): fixed since PostgreSQL's first releases.
    static func value(_ text: String, type: UInt32) -> PostgresValue {
        switch type {
        case 16: return .boolean(text == "t")
        case 20, 21, 23, 26: return Int64(text).map(PostgresValue.integer) ?? .text(text)
        case 700, 701: return double(text).map(PostgresValue.real) ?? .text(text)
        case 17: return bytes(hex: text).map(PostgresValue.bytes) ?? .text(text)
        default: return .text(text)
        }
    }

    static func double(_ text: String) -> Double? {
        switch text {
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    /// `bytea` in the hex output format (`\x0a1b…`), the default since PostgreSQL 9.0.
    static func bytes(hex text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2 - 1)
        var i = 2
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}
