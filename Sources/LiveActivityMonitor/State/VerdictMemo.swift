import Glibc
import Prometheus
import Synchronization

/// The verdicts the writer has given, by attributes type and content structure
/// (`ContentStructure`), for one version of the shapes: a push whose content is built like an
/// earlier one's gets its verdict again without walking the content (that walk, and the words
/// of a verdict, were the largest part of the engine's work per push: PERFORMANCE.md, session
/// 35). Shared by the copies of one `ContentShapes`; each change of a shape gives the shapes a
/// new version, so a verdict given under other shapes (a later commit's, or one rolled back) is
/// never given again.
final class VerdictMemo: Sendable {
    private struct Key: Hashable {
        /// By its bytes, as the shapes key their types: two spellings of one character are two types.
        let type: ExactString
        let structure: [UInt8]

        /// The bytes at once: an array hashes its elements one by one.
        func hash(into hasher: inout Hasher) {
            hasher.combine(type)
            structure.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        /// The structures' bytes compared at once too (an array compares element by element).
        static func == (a: Key, b: Key) -> Bool {
            a.type == b.type && a.structure.withUnsafeBytes { x in
                b.structure.withUnsafeBytes { y in x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) }
            }
        }
    }

    private struct Verdicts {
        var version: UInt64 = 0
        var all: [Key: String?] = [:]
        /// The last few found, compared before `all` is hashed: pushes repeat a few structures
        /// of a few types, and comparing their bytes costs a tenth of hashing them (the memo's
        /// lookup had been 1,300 instructions a push: PERFORMANCE.md, session 36).
        var recent: [(key: Key, verdict: String?)] = []
        var nextRecent = 0

        /// Keeps `key` among the recent ones, in place of the oldest.
        mutating func remember(_ key: Key, _ verdict: String?) {
            if recent.count < VerdictMemo.recentCount {
                recent.append((key, verdict))
            } else {
                recent[nextRecent] = (key, verdict)
                nextRecent = (nextRecent + 1) % VerdictMemo.recentCount
            }
        }
    }

    /// Past this many structures the memo starts again: contents that vary without end (arrays
    /// of every length) cost the walk, not memory.
    static let limit = 4096
    /// How many of the last found are compared before the dictionary.
    static let recentCount = 4

    private let memo = Mutex(Verdicts())
    private static let versions = Atomic<UInt64>(0)

    /// A version no shapes had before.
    static func newVersion() -> UInt64 {
        versions.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The verdict on a content of `structure` as `type` under the shapes of `version`: as given
    /// before, else `judge()`'s, kept.
    func verdict(type: String, structure: [UInt8], version: UInt64, judge: () -> String?) -> String? {
        let key = Key(type: ExactString(type), structure: structure)
        let known: String?? = memo.withLock { memo in
            guard memo.version == version else { return nil }
            if let hit = memo.recent.first(where: { $0.key == key }) { return .some(hit.verdict) }
            guard let found = memo.all[key] else { return nil }
            memo.remember(key, found)
            return .some(found)
        }
        if let known { return known }
        let verdict = judge()
        memo.withLock { memo in
            if memo.version != version || memo.all.count >= Self.limit { memo = Verdicts(version: version) }
            memo.all[key] = .some(verdict)
            memo.remember(key, verdict)
        }
        return verdict
    }

    /// How many verdicts are kept (tests).
    var count: Int { memo.withLock { $0.all.count } }
}
