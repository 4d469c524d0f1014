import Prometheus

/// An activity's attributes type and app, in one block that records share: 8 bytes in the
/// record where the two strings took 32. A fleet has a handful of pairs, so the table keeps one
/// block of each (`ActivityTable`'s pool) and start-up's rows share them as they are read
/// (`RecentStrings.typeAndApp`). Immutable: a record given another type or app gets another block.
final class TypeAndApp: Sendable, Equatable {
    let attributesType: String
    let app: String?

    init(_ attributesType: String, app: String?) {
        self.attributesType = attributesType
        self.app = app
    }

    /// As strings compare (the record's equality before the block).
    static func == (a: TypeAndApp, b: TypeAndApp) -> Bool {
        a === b || (a.attributesType == b.attributesType && a.app == b.app)
    }

    /// Whether the two hold the same bytes (interning must not turn one spelling into an
    /// equivalent other: `ExactText`).
    func hasBytes(of other: TypeAndApp) -> Bool {
        self === other || (ExactText.equal(attributesType, other.attributesType)
            && (app == nil) == (other.app == nil) && ExactText.equal(app ?? "", other.app ?? ""))
    }
}

/// A block as a key that is equal to another only when their bytes are (`TypeAndApp.hasBytes`):
/// the table's pool.
struct ExactTypeAndApp: Hashable {
    let block: TypeAndApp

    static func == (a: ExactTypeAndApp, b: ExactTypeAndApp) -> Bool { a.block.hasBytes(of: b.block) }

    func hash(into hasher: inout Hasher) {
        ExactText.hash(block.attributesType, into: &hasher)
        if let app = block.app { ExactText.hash(app, into: &hasher) }
        hasher.combine(block.app == nil)
    }
}
