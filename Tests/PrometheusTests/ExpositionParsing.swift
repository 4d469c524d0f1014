/// A deliberately naive reader of rendered text, the way a scraper splits it: by line feed.
enum ExpositionParsing {
    /// The lines split at every line feed byte. Not `String.split(separator: "\n")`: that splits
    /// Characters, and "\r\n" is one Character, so it would hide a forged line.
    static func lines(_ text: String) -> [String] {
        text.utf8.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Lines that are neither empty nor comments: what a parser takes as samples.
    static func sampleLines(_ text: String) -> [String] {
        lines(text).filter { !$0.hasPrefix("#") }
    }

    /// Undoes label-value escaping (`\\`, `\"`, `\n`).
    static func unescapeLabelValue(_ escaped: Substring) -> String {
        var result = String.UnicodeScalarView()
        var iterator = escaped.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\", let next = iterator.next() else {
                result.append(scalar)
                continue
            }
            result.append(next == "n" ? "\n" : next)
        }
        return String(result)
    }
}
