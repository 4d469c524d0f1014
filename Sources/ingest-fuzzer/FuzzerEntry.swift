/// libFuzzer's entry point: one input per call, on libFuzzer's thread.
@_cdecl("LLVMFuzzerTestOneInput")
public func ingestFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    IngestFuzzCheck.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
