import JSON
import Prometheus

/// The content shape of each attributes type (DESIGN.md section 4): learned from what the app
/// encoded, or declared by a template (a declared one wins). The state engine learns into it and
/// judges pushes by it; the writer persists what it learned (`content_shapes`), and the scrape
/// and `GET /api/shapes` read it.
struct ContentShapes: Sendable, Equatable {
    /// By attributes type, compared by its bytes (like its label).
    private(set) var learned: [ExactString: ObjectShape] = [:]
    private(set) var declared: [ExactString: ObjectShape] = [:]
    /// Whether pushes are judged here. A replay (the read API's, start-up's after a crash) does
    /// not judge: it honours the verdict the writer stored with each event (`Event.contentVerdict`),
    /// so that it never disagrees with what was decided and counted, whatever the shapes learned
    /// since. Nor does it learn: the writer stored what it learned in the same commit.
    let judging: Bool
    /// Types whose learned shape changed since `takeChanged` (the commit writes them).
    private(set) var changed: Set<ExactString> = []
    /// The verdicts given under these shapes, shared by their copies (`VerdictMemo`).
    let memo = VerdictMemo()
    /// New at each change of a shape: the memo's verdicts stand for one version only.
    private var version = VerdictMemo.newVersion()

    init(judging: Bool, declared: [String: ObjectShape] = [:], learned: [String: ObjectShape] = [:]) {
        self.judging = judging
        for (type, shape) in declared { self.declared[ExactString(type)] = shape }
        for (type, shape) in learned { self.learned[ExactString(type)] = shape }
    }

    /// For a replay: judges nothing, learns nothing.
    static let recorded = ContentShapes(judging: false)

    /// Learns one content-state the app encoded with its own type: an `activity.started` by the
    /// app, and (delivery evidence) an `activity.observed`. A content that is not an object
    /// teaches nothing. Read only when judging (`ContentReading`; a replay learns nothing).
    mutating func learn(content: @autoclosure () -> JSONValue?, of attributesType: String) {
        guard judging, case .object(let object)? = content() else { return }
        let type = ExactString(attributesType)
        var shape = learned[type] ?? ObjectShape()
        shape.learn(object)
        if shape != learned[type] {
            learned[type] = shape
            changed.insert(type)
            version = VerdictMemo.newVersion()
        }
    }

    /// The shape pushes are judged by: the declared one, else the learned one.
    func shape(of attributesType: String) -> ObjectShape? {
        let type = ExactString(attributesType)
        return declared[type] ?? learned[type]
    }

    /// Why `content` would not decode on the phone as `attributesType`'s content-state, in
    /// words ("`rating`: a number where the app sends a string"); nil when it would, or when
    /// the type has no shape yet (then a push is applied).
    func verdict(on content: JSONText, of attributesType: String) -> String? {
        guard judging, shape(of: attributesType) != nil else { return nil }
        return verdict(on: try? JSONParser.parse(content.text), of: attributesType)
    }

    /// The same, for a content as read where it was decoded: given once for each structure of
    /// content under these shapes (`VerdictMemo`).
    func verdict(on reading: ContentReading?, of attributesType: String) -> String? {
        guard judging else { return nil }
        // Its parts taken in place: the reading bound whole would be copied.
        guard let structure = reading?.structure else { return verdict(on: reading?.value, of: attributesType) }
        return memo.verdict(type: attributesType, structure: structure, version: version) {
            verdict(on: reading?.value, of: attributesType)
        }
    }

    /// The same, for a content already parsed (nil: it did not parse).
    func verdict(on content: JSONValue?, of attributesType: String) -> String? {
        guard judging, let shape = shape(of: attributesType) else { return nil }
        guard case .object(let object)? = content else { return "not a JSON object" }
        let problems = shape.problems(in: object)
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// The types with a shape (declared or learned).
    var typeCount: Int { declared.keys.filter { learned[$0] == nil }.count + learned.count }

    /// Every type with a shape, in byte order: (type, the shape pushes are judged by, where it
    /// comes from, the learned one when a declared one wins).
    var all: [(type: String, shape: ObjectShape, source: String, learned: ObjectShape?)] {
        let types = Set(declared.keys).union(learned.keys).sorted()
        return types.map { type in
            if let declared = declared[type] { (type.text, declared, "template", learned[type]) }
            else { (type.text, learned[type]!, "app", nil) }
        }
    }

    /// The learned shapes changed since the last call, and forgets them.
    mutating func takeChanged() -> [(type: String, shape: ObjectShape)] {
        defer { changed = [] }
        return changed.sorted().map { ($0.text, learned[$0]!) }
    }

    static func == (a: ContentShapes, b: ContentShapes) -> Bool {
        a.learned == b.learned && a.declared == b.declared && a.judging == b.judging
    }
}
