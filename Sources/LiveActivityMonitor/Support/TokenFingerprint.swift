import Hashing

/// The only form in which a push token is kept: the first 16 hex digits of its SHA-256.
/// A token is 32+ random bytes, so the digest cannot be reversed, and 64 bits are plenty to
/// tell one activity's tokens apart.
public enum TokenFingerprint {
    /// - Precondition: `token` is hex (the validator checks it): only ASCII letters are folded
    ///   to lower case, byte by byte (`String.lowercased()` is Unicode-aware and allocates).
    public static func of(_ token: String) -> String {
        var bytes = Array(token.utf8)
        for i in bytes.indices where bytes[i] >= UInt8(ascii: "A") && bytes[i] <= UInt8(ascii: "Z") {
            bytes[i] |= 0x20
        }
        return SHA256.hexDigest(bytes, prefixBytes: 8)
    }

    /// The same for the token's UTF-8 bytes, read in place (the one-object ingest fast path,
    /// PushEventScanner, has them so): a token without capitals is hashed as it is.
    static func of(utf8 token: UnsafeBufferPointer<UInt8>) -> String {
        guard !token.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            return of(String(decoding: token, as: UTF8.self))
        }
        return SHA256.hexDigest(token, prefixBytes: 8)
    }
}

extension TokenFingerprint {
    /// A fingerprint as a record keeps it: the 16 hex digits `of` makes, as the 8 bytes they
    /// spell (16 bytes of text do not fit a String's 15-byte inline form, so each took a heap
    /// block of 48 bytes); any other text (a row written by another version) kept as it is, so
    /// that it reads back exactly as it came. That text is boxed (`Text`, a reference): so the
    /// optional takes 9 bytes of a record, not 17 (the record's stride, `ActivityRecord`).
    enum Stored: Sendable, Hashable {
        case digits(UInt64)
        case text(Text)

        final class Text: Sendable, Hashable {
            let string: String

            init(_ string: String) { self.string = string }

            static func == (a: Text, b: Text) -> Bool { a.string == b.string }
            func hash(into hasher: inout Hasher) { hasher.combine(string) }
        }

        init(_ fingerprint: String) {
            // Read as contiguous bytes: walking `utf8` as a sequence cost a push more than its hash.
            var text = fingerprint
            self = text.withUTF8 { Self.digits(UnsafeRawBufferPointer($0)) }.map(Stored.digits) ?? .text(Text(fingerprint))
        }

        /// The same from the text's UTF-8 bytes (a row's column, read in place): a String is made
        /// only for text that is not 16 hex digits.
        init(utf8 bytes: UnsafeRawBufferPointer) {
            self = Self.digits(bytes).map(Stored.digits) ?? .text(Text(String(decoding: bytes, as: UTF8.self)))
        }

        /// The 8 bytes that `bytes` spell when they are 16 lowercase hex digits; else nil. Once
        /// a push (`ActivityRecord.hasTokenFingerprint`): a digit or a letter by one subtraction.
        private static func digits(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
            guard bytes.count == 16 else { return nil }
            var bits: UInt64 = 0
            for byte in bytes {
                var nibble = byte &- UInt8(ascii: "0")
                if nibble > 9 {
                    nibble = byte &- UInt8(ascii: "a")
                    guard nibble < 6 else { return nil }
                    nibble += 10
                }
                bits = bits << 4 | UInt64(nibble)
            }
            return bits
        }

        var text: String {
            switch self {
            case .text(let text): return text.string
            case .digits(let bits):
                return String(unsafeUninitializedCapacity: 16) { out in
                    for i in 0..<16 {
                        let nibble = UInt8(truncatingIfNeeded: bits >> (60 - 4 * UInt64(i))) & 0x0f
                        out[i] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                    }
                    return 16
                }
            }
        }
    }
}
