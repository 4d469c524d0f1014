import Foundation

/// A fresh directory for one test's database files.
///
/// Used as `let dir = try TemporaryDirectory(); defer { dir.remove() }` rather than through a
/// `with { dir in … }` closure: Swift 6.3.1 gave a closure written after an `#expect(throws:)`
/// inside such a closure the same symbol as the `#expect`'s own closure, so it ran the wrong code.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("SQLiteDBTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Removes the directory and everything in it.
    func remove() {
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            print("warning: could not remove \(url.path): \(error)")
        }
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// The size of the file `name` in bytes, or nil when it does not exist.
    func fileSize(_ name: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path(name)))?[.size] as? Int
    }
}
