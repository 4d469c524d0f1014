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
}
