import Hashing
import Testing
@testable import LiveActivityMonitor

/// Fingerprints are SHA-256 (pinned against known digests), case-insensitive on the token.
@Suite struct TokenFingerprintTests {
    @Test func sha256MatchesTheStandardVector() {
        #expect(SHA256.hexDigest(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hexDigest(Array("abc".utf8), prefixBytes: 2) == "ba78")
        // Bytes without contiguous storage take the copying path: the same digest.
        #expect(SHA256.hexDigest("abc".utf8.lazy.map { $0 }) == SHA256.hexDigest(Array("abc".utf8)))
    }

    @Test func fingerprintIsTheFirst16HexOfTheLowercasedToken() {
        #expect(TokenFingerprint.of("80a1ffffffffffffffffffffffffffff") == "d942b9e43910deb3")
        #expect(TokenFingerprint.of("80A1FFFFFFFFFFFFFFFFFFFFFFFFFFFF") == "d942b9e43910deb3")
    }
}
