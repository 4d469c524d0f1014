import Glibc
import Prometheus

/// The few distinct strings met last, one copy of each: a fleet's attributes types and apps are
/// a handful of values repeated in every record, so records read back one after another can
/// share a copy of each instead of holding one apiece. Compared by bytes (`ExactText`), the same
/// storage at once.
struct RecentStrings {
    private var strings: [String] = []
    static let capacity = 8
    /// The blocks made last of such strings (`typeAndApp`), with their strings' identities.
    private var blocks: [(type: StringIdentity, app: StringIdentity, block: TypeAndApp)] = []

    /// A string met before with the bytes of `s`; else `s`, remembered.
    mutating func shared(_ s: String) -> String {
        if let known = strings.first(where: { ExactText.equal($0, s) }) { return known }
        if strings.count == Self.capacity { strings.removeFirst() }
        strings.append(s)
        return s
    }

    /// The same for a string's UTF-8 bytes read in place (a row's column): a string is made only
    /// when none met before has these bytes, so that a row whose type was met costs no copy.
    mutating func shared(utf8 bytes: UnsafeRawBufferPointer) -> String {
        for known in strings {
            var known = known
            // Recent strings are native (made here or read from rows): contiguous, no copy.
            if known.withUTF8({ $0.count == bytes.count && (bytes.isEmpty || memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0) }) {
                return known
            }
        }
        return shared(String(decoding: bytes, as: UTF8.self))
    }

    /// A block of `type` and `app` met last with these very strings (shared through here, so
    /// compared by identity: two words each), else a new one, remembered.
    mutating func typeAndApp(_ type: String, _ app: String?) -> TypeAndApp {
        let typeIdentity = StringIdentity(of: type), appIdentity = StringIdentity(of: app)
        if let known = blocks.first(where: { $0.type == typeIdentity && $0.app == appIdentity }) { return known.block }
        let block = TypeAndApp(type, app: app)
        if blocks.count == Self.capacity { blocks.removeFirst() }
        blocks.append((typeIdentity, appIdentity, block))
        return block
    }
}
