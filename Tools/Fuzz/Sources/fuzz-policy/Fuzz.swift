import FuzzSupport

/// libFuzzer's entry point: one input, any bytes (see FuzzChecks.policy). Seeds: corpus/policy.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzChecks.policy(bytes)
    return 0
}
