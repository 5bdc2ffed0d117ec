import FuzzSupport

/// libFuzzer's entry point: one input, any bytes (see FuzzChecks.stream). Seeds: corpus/stream.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzChecks.stream(bytes)
    return 0
}
