import LivenessCore

/// A point in pixels, origin at the top left of the upright frame.
public struct Point: Sendable, Equatable, Hashable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A rectangle in pixels, origin at the top left of the upright frame: the core's `FaceBox`, one
/// type for a face's box in an observation and any region the tracker or a check measures.
public typealias Rect = FaceBox

extension FaceBox {
    /// The centre point.
    public var center: Point { Point(x: x + width / 2, y: y + height / 2) }
}

/// An 8-bit colour.
public struct Color: Sendable, Equatable {
    public var red: Int32
    public var green: Int32
    public var blue: Int32
    public init(red: Int, green: Int, blue: Int) {
        self.red = Int32(red)
        self.green = Int32(green)
        self.blue = Int32(blue)
    }

    public static let white = Color(red: 255, green: 255, blue: 255)
    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let green = Color(red: 40, green: 200, blue: 80)
    public static let red = Color(red: 230, green: 50, blue: 40)
    public static let yellow = Color(red: 250, green: 210, blue: 40)
    public static let blue = Color(red: 40, green: 110, blue: 230)
    public static let gray = Color(red: 140, green: 140, blue: 140)
    public static let lightGray = Color(red: 225, green: 225, blue: 225)
    public static let orange = Color(red: 245, green: 140, blue: 30)
    public static let purple = Color(red: 150, green: 70, blue: 200)
}
