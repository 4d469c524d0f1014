/// The rule for identifier fields (ids, attributes type, app, APNs reason and ids): text
/// without control characters. Identifiers end up in keys, labels, logs and terminals, where
/// a control character splits, forges or hides text; no real identifier has one. Both ingest
/// paths (`FieldReader`, `PushEventScanner`) ask this one predicate.
enum IdentifierText {
    static let controlCharacterError = "must not contain control characters (U+0000–U+001F, U+007F–U+009F)"

    /// Whether UTF-8 `bytes` hold a control character (Unicode's Cc: C0, DEL and C1).
    @inline(__always)
    static func hasControlCharacter(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var afterC2 = false
        for byte in bytes {
            // C1 is U+0080–U+009F: 0xC2 then a continuation byte 0x80–0x9F.
            if byte < 0x20 || byte == 0x7F || (afterC2 && byte <= 0x9F) { return true }
            afterC2 = byte == 0xC2
        }
        return false
    }

    static func hasControlCharacter(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { hasControlCharacter($0) }
    }
}
