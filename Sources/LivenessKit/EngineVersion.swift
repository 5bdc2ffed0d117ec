/// The engine's identity, written into every report.
public enum LivenessEngine {
    /// The engine's version.
    public static let version = "0.2.0"
}
