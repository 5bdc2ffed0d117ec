import CFaceTracking

/// Drawing on an image, for annotated videos, stills and plots (OpenCV imgproc through the
/// shim's `ft_draw_*`). Coordinates in pixels; thickness in pixels, -1 fills.
extension Image {
    /// `ft_draw_circle`
    public func drawCircle(center: Point, radius: Double, color: Color, thickness: Int = 2) {
        ft_draw_circle(handle, center.x, center.y, radius, color.blue, color.green, color.red, Int32(thickness))
    }

    /// `ft_draw_line`
    public func drawLine(from a: Point, to b: Point, color: Color, thickness: Int = 1) {
        ft_draw_line(handle, a.x, a.y, b.x, b.y, color.blue, color.green, color.red, Int32(thickness))
    }

    /// `ft_draw_rect`
    public func drawRect(_ rect: Rect, color: Color, thickness: Int = 1) {
        ft_draw_rect(handle, rect.x, rect.y, rect.width, rect.height, color.blue, color.green, color.red, Int32(thickness))
    }

    /// Small dots at each point (`ft_draw_points`).
    public func drawPoints(_ points: [Point], radius: Double = 1.5, color: Color) {
        let xy = points.flatMap { [Float($0.x), Float($0.y)] }
        xy.withUnsafeBufferPointer { ft_draw_points(handle, $0.baseAddress, Int32(points.count), radius, color.blue, color.green, color.red) }
    }

    /// An open polyline (`ft_draw_polyline`).
    public func drawPolyline(_ points: [Point], color: Color, thickness: Int = 1) {
        let xy = points.flatMap { [Float($0.x), Float($0.y)] }
        xy.withUnsafeBufferPointer { ft_draw_polyline(handle, $0.baseAddress, Int32(points.count), color.blue, color.green, color.red, Int32(thickness)) }
    }

    /// ASCII text with its baseline-left corner at `origin`; `scale` 1 is about 22 px tall (`ft_draw_text`).
    public func drawText(_ text: String, at origin: Point, scale: Double = 1, color: Color, thickness: Int = 1) {
        ft_draw_text(handle, text, origin.x, origin.y, scale, color.blue, color.green, color.red, Int32(thickness))
    }
}
