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
    }

    /// Past this many structures the memo starts again: contents that vary without end (arrays
    /// of every length) cost the walk, not memory.
    static let limit = 4096

    private let memo = Mutex<(version: UInt64, verdicts: [Key: String?])>((0, [:]))
    private static let versions = Atomic<UInt64>(0)

    /// A version no shapes had before.
    static func newVersion() -> UInt64 {
        versions.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The verdict on a content of `structure` as `type` under the shapes of `version`: as given
    /// before, else `judge()`'s, kept.
    func verdict(type: String, structure: [UInt8], version: UInt64, judge: () -> String?) -> String? {
        let key = Key(type: ExactString(type), structure: structure)
        if let known = memo.withLock({ $0.version == version ? $0.verdicts[key] : nil }) { return known }
        let verdict = judge()
        memo.withLock { memo in
            if memo.version != version || memo.verdicts.count >= Self.limit { memo = (version, [:]) }
            memo.verdicts[key] = .some(verdict)
        }
        return verdict
    }

    /// How many verdicts are kept (tests).
    var count: Int { memo.withLock { $0.verdicts.count } }
}
