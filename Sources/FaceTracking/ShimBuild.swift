import CFaceTracking

/// How the C shim under this module was built and which code it runs on this CPU
/// (`ft_build`), for `liveness --version` and the benchmarks.
public struct ShimBuild: Sendable, Equatable {
    /// False when the shim's C++ was compiled without optimisation: a debug build without
    /// `-Xcxx -O2`, where dlib's detector runs about 150x slower.
    public let optimised: Bool
    /// The HOG detector's code path: "avx2" (AVX2 and FMA, chosen at run time when the CPU has
    /// both) or "baseline"; `LIVENESS_SIMD=baseline` in the environment forces "baseline".
    public let simd: String

    /// This process's shim.
    public static var current: ShimBuild {
        let info = ft_build()
        return ShimBuild(optimised: info.optimised != 0, simd: info.simd.map { String(cString: $0) } ?? "baseline")
    }

    /// One line for humans, e.g. "shim: optimised, HOG on avx2".
    public var summary: String {
        "shim: \(optimised ? "optimised" : "NOT optimised (build with -c release or -Xcxx -O2)"), HOG on \(simd)"
    }
}
