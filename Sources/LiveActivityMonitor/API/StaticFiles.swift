import Foundation
import HTTPServer

/// The dashboard's files from the web root: read-only, nothing outside the root (no `..`, no
/// symlink leading out), a fixed set of content types.
struct StaticFiles: Sendable {
    /// The web root with symlinks resolved; nil if it does not exist.
    let root: String?

    init(webRoot: String) {
        root = Self.realPath(webRoot)
    }

    static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8", "json": "application/json", "svg": "image/svg+xml",
        "png": "image/png", "ico": "image/x-icon", "txt": "text/plain; charset=utf-8",
        "md": "text/markdown; charset=utf-8",
    ]

    /// The file named by a request path's decoded segments (``HTTPRequest/pathSegments``), or
    /// nil. A segment that is empty, hidden, `.` or `..` (`%2e%2e` arrives decoded), or holds a
    /// `/` (from `%2F`), a backslash or a NUL names no file here.
    func serve(_ segments: [String]) -> HTTPResponse? {
        guard let root else { return nil }
        let names = segments == [""] ? ["index.html"] : segments
        guard !names.contains(where: { name in
            name.isEmpty || name.hasPrefix(".") || name.contains("/") || name.contains("\\") || name.contains("\0")
        }) else { return nil }
        let relative = names.joined(separator: "/")
        guard let resolved = Self.realPath(root + "/" + relative), resolved.hasPrefix(root + "/") else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), !isDirectory.boolValue,
              let data = FileManager.default.contents(atPath: resolved)
        else { return nil }
        let ext = resolved.split(separator: ".").last.map { String($0).lowercased() } ?? ""
        return HTTPResponse(status: 200, headers: [
            (name: "Content-Type", value: Self.contentTypes[ext] ?? "application/octet-stream"),
            (name: "Cache-Control", value: "no-cache"),
        ], body: [UInt8](data))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
