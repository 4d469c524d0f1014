import Hashing

/// The only form in which a push token is kept: the first 16 hex digits of its SHA-256.
/// A token is 32+ random bytes, so the digest cannot be reversed, and 64 bits are plenty to
/// tell one activity's tokens apart.
public enum TokenFingerprint {
    public static func of(_ token: String) -> String {
        SHA256.hexDigest(token.lowercased().utf8, prefixBytes: 8)
    }
}
