import Foundation
import JSON

extension MonitorServer {
    /// The attributes types the dashboard has a template for (`templates/index.json` in the web
    /// root): they always get their own series. None when the file is missing or unreadable;
    /// the dashboard then draws every type with its generic template anyway.
    static func templateTypes(in webRoot: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: webRoot + "/templates/index.json"),
              case .object(let index)? = try? JSONParser.parse([UInt8](data)),
              case .array(let names)? = index["templates"]
        else { return [] }
        return names.compactMap { if case .string(let name) = $0 { name } else { nil } }
    }
}
