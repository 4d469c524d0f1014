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
