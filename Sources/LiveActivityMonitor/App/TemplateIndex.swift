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

extension MonitorServer {
    /// The content shapes the listed templates declare (`content_shape`, Web/templates/FORMAT.md),
    /// by attributes type. A shape that cannot be read is left out and logged: pushes of that
    /// type are then judged by what the app's contents teach.
    static func declaredShapes(in webRoot: String, log: (String) -> Void) -> [String: ObjectShape] {
        var out: [String: ObjectShape] = [:]
        for type in templateTypes(in: webRoot) {
            // The names the page looks up; others cannot be a file name here either.
            guard type.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }),
                  let data = FileManager.default.contents(atPath: webRoot + "/templates/" + type + ".json"),
                  case .object(let template)? = try? JSONParser.parse([UInt8](data)),
                  let declared = template["content_shape"]
            else { continue }
            guard case .object(let text) = declared else {
                log("templates/\(type).json: content_shape must be an object (path → type); ignored")
                continue
            }
            switch ObjectShape.parse(text) {
            case .success(let shape): out[type] = shape
            case .failure(let error): log("templates/\(type).json: content_shape \(error); ignored")
            }
        }
        return out
    }
}
