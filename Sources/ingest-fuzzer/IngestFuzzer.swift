import Foundation

#if FUZZING
// libFuzzer's driver, declared without a C module. SwiftPM renames an executable's entry point
// on Linux (and defines `main` as that), so libFuzzer's own `main` is never linked: our `main`
// starts the driver instead. Needs `-enable-experimental-feature Extern` (Tests/fuzz.sh).
@_extern(c, "LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif

/// `ingest-fuzzer`: built with `-D FUZZING -sanitize=fuzzer` (Tests/fuzz.sh) it is a libFuzzer
/// binary taking libFuzzer's options; built plainly it replays the files (or directories of
/// files) given as arguments through the same checks, which is how the tests replay the corpus.
@main
enum IngestFuzzer {
    static func main() {
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv) { data, size in ingestFuzzerTestOneInput(data, size) })
        #else
        var count = 0, fast = 0
        for argument in CommandLine.arguments.dropFirst() {
            for path in files(at: argument) {
                guard let data = FileManager.default.contents(atPath: path) else {
                    FileHandle.standardError.write(Data("ingest-fuzzer: cannot read \(path)\n".utf8))
                    exit(1)
                }
                if IngestFuzzCheck.run([UInt8](data)) > 0 { fast += 1 }
                count += 1
            }
        }
        print("ingest-fuzzer: \(count) inputs replayed, every invariant held (\(fast) taken by the push fast path)")
        #endif
    }

    /// `path` itself, or the regular files under it when it is a directory, sorted.
    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let names = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
        return names.sorted().map { path + "/" + $0 }.filter {
            var dir: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &dir) && !dir.boolValue
        }
    }
}
