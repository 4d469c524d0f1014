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

    func serve(_ path: String) -> HTTPResponse? {
        guard let root else { return nil }
        // libmicrohttpd has already percent-decoded the path, so `%2e%2e` arrives as `..`.
        let relative = path == "/" ? "index.html" : String(path.drop(while: { $0 == "/" }))
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !relative.isEmpty, !relative.contains("\0"), !relative.contains("\\"),
              !segments.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty || $0.hasPrefix(".") })
        else { return nil }
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
