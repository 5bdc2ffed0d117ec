extension Duration {
    /// The duration in seconds, as a Double (for wall-clock timings in reports and benchmarks).
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
