/// An activity's two JSON texts (`attributes`, `content_state`), as a set: which of them a live
/// record leaves to its row (`ActivityRecord.textsInRow`), or which columns a row write leaves
/// as stored (`RowWrite`).
///
/// Most of a live record's heap was these texts, which only the row and the pages that show
/// them need. Once the commit that writes a live record's row is done, memory lets them go;
/// the pages read them from the rows for the records they return (docs/ARCHITECTURE.md, "What
/// one record costs").
public struct RecordTexts: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let attributes = RecordTexts(rawValue: 1)
    public static let contentState = RecordTexts(rawValue: 2)
    public static let both: RecordTexts = [.attributes, .contentState]
}
