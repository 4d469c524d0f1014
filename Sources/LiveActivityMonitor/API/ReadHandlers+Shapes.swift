import HTTPServer
import JSON

extension ReadHandlers {
    /// `GET /api/shapes` (DESIGN.md section 6): each attributes type's content shape, the one
    /// pushes are judged by, and where it comes from (`template` or `app`); a type whose template
    /// declares one also shows what the app's contents taught (`learned`, null when nothing yet).
    func shapes() -> HTTPResponse {
        let all = store.withLiveState { $0.shapes.all }
        return .json { w in
            w.beginObject()
            w.key("shapes")
            w.beginArray()
            for entry in all {
                w.beginObject()
                w.key("attributes_type"); w.string(entry.type)
                w.key("source"); w.string(entry.source)
                w.key("shape"); w.write(.object(entry.shape.text))
                if entry.source == "template" {
                    w.key("learned")
                    if let learned = entry.learned { w.write(.object(learned.text)) } else { w.null() }
                }
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
    }
}
