import CCrypto

/// SHA-256 through OpenSSL's libcrypto (Foundation on Linux has no hash functions).
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func digest<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        let input = Array(bytes)
        input.withUnsafeBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in
                _ = CCrypto.SHA256(inp.baseAddress, inp.count, o.baseAddress)
            }
        }
        return out
    }

    /// The digest as lowercase hex.
    public static func hexDigest(_ string: String) -> String {
        digest(Array(string.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
