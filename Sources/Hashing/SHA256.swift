import CCrypto

/// SHA-256 through OpenSSL's libcrypto (Foundation on Linux has no hash functions).
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func digest<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        // The low-level calls: OpenSSL 3's one-shot `SHA256()` fetches the algorithm from its
        // provider on every call (several times the hash itself for a push token).
        var context = SHA256_CTX()
        _ = SHA256_Init(&context)
        // In place when the bytes are contiguous (an array, a native string's UTF-8).
        let done: Void? = bytes.withContiguousStorageIfAvailable { _ = SHA256_Update(&context, $0.baseAddress, $0.count) }
        if done == nil {
            let input = Array(bytes)
            input.withUnsafeBufferPointer { _ = SHA256_Update(&context, $0.baseAddress, $0.count) }
        }
        out.withUnsafeMutableBufferPointer { _ = SHA256_Final($0.baseAddress, &context) }
        return out
    }

    /// The first `prefixBytes` bytes of the digest (all 32 by default) as lowercase hex,
    /// written in one buffer: a string per byte was a visible share of batched ingest.
    public static func hexDigest<Bytes: Collection>(_ bytes: Bytes, prefixBytes: Int = 32) -> String
    where Bytes.Element == UInt8 {
        let digest = digest(bytes)
        let count = min(max(prefixBytes, 0), digest.count)
        func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
        return String(unsafeUninitializedCapacity: 2 * count) { out in
            for i in 0..<count {
                out[2 * i] = hex(digest[i] >> 4)
                out[2 * i + 1] = hex(digest[i] & 0x0f)
            }
            return 2 * count
        }
    }
}
