/// Fixed-precision numbers for traces and reports. Values that go into a trace are first
/// `quantized` to the precision they are printed with, so that replaying a trace feeds the
/// state machine exactly the doubles the analysis fed it.
public enum NumberFormat {
    /// Decimal places written for measured values.
    public static let decimals = 6
    private static let factor = 1e6

    /// `value` rounded to `decimals` places: the double that parsing its printed form gives.
    @inlinable public static func quantized(_ value: Double) -> Double {
        guard value.isFinite else { return value }
        return (value * 1e6).rounded() / 1e6
    }

    /// `value` with `decimals` places and no trailing zeros beyond one ("0.5", "12.0"). Values
    /// too large for that (|value| ≥ 1e12, which no measurement reaches) are written in Swift's
    /// shortest round-trip form, which parses back to the same double.
    public static func string(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        guard abs(value) < 1e12 else { return "\(value)" }
        let scaled = Int64((value * factor).rounded())
        let negative = scaled < 0
        let magnitude = negative ? UInt64(-scaled) : UInt64(scaled)
        let whole = magnitude / 1_000_000
        var fraction = String(magnitude % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.count > 1 && fraction.hasSuffix("0") { fraction.removeLast() }
        return (negative ? "-" : "") + "\(whole).\(fraction)"
    }
}
