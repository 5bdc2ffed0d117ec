/// Both eyes' closures on the spec's 0…1 scale (0 open, 1 closed), subject's own left and right.
public struct EyeClosure: Sendable, Equatable {
    /// Subject's left eye closure, 0…1.
    public var left: Double
    /// Subject's right eye closure, 0…1.
    public var right: Double
    /// Mean of the two; the blink rule compares this with `blinkClosureThreshold`.
    public var mean: Double { (left + right) / 2 }

    /// Creates a pair of closures.
    public init(left: Double, right: Double) {
        self.left = left
        self.right = right
    }
}
