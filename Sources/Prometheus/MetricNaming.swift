/// The name rules of the Prometheus data model.
///
/// Names come from code, so the types of this module check them with `precondition`:
/// a bad name is a programming error found by the first test that renders it.
public enum MetricNaming {
    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    public static func isValidMetricName(_ name: String) -> Bool {
        isValid(name, allowColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, and not starting with `__` (reserved for Prometheus itself).
    public static func isValidLabelName(_ name: String) -> Bool {
        isValid(name, allowColon: false) && !name.hasPrefix("__")
    }

    private static func isValid(_ name: String, allowColon: Bool) -> Bool {
        guard !name.isEmpty else { return false }
        for (index, byte) in name.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "_"):
                continue
            case UInt8(ascii: ":") where allowColon:
                continue
            case UInt8(ascii: "0")...UInt8(ascii: "9") where index > 0:
                continue
            default:
                return false
            }
        }
        return true
    }
}
