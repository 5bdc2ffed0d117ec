import LivenessKit
import FaceTracking
import LivenessCore

/// The PNG timeline of `analyze --plot`: eye closure (each eye and their mean, with the blink
/// threshold) and relative yaw (with the ± turn threshold) against time, with the frames not
/// credited shaded (grey: no face; orange: device rotating), the autoshot, the credited
/// actions, the snapshot and the 20 s cap marked.
struct TimelinePlot {
    var title: String
    var records: [TraceRecord]
    var events: [(seconds: Double, event: LivenessEvent)]
    var policy: LivenessPolicy

    private let width = 1280.0, height = 620.0
    private let left = 70.0, right = 24.0

    func render() throws(FaceTrackingError) -> Image {
        let image = try Image(width: Int(width), height: Int(height), color: .white)
        let last = max(records.last?.seconds ?? 1, 0.5)
        let autoshot = events.first { if case .autoshot = $0.event { return true } else { return false } }
        let cap = autoshot.map { $0.seconds + policy.scanCapSeconds }
        let end = max(last, 0.5)
        func x(_ s: Double) -> Double { left + (width - left - right) * s / end }
        let closurePanel = (top: 70.0, bottom: 300.0, lo: 0.0, hi: 1.0)
        let yaws = records.compactMap(\.relativeYawDegrees)
        let span = max(15, (yaws.map { abs($0) }.max() ?? 0) * 1.15)
        let yawPanel = (top: 350.0, bottom: 560.0, lo: -span, hi: span)
        func y(_ v: Double, _ p: (top: Double, bottom: Double, lo: Double, hi: Double)) -> Double {
            p.bottom - (p.bottom - p.top) * (min(max(v, p.lo), p.hi) - p.lo) / (p.hi - p.lo)
        }

        // Frames not credited for a reason other than the phase: shade them in both panels.
        for (i, r) in records.enumerated() {
            let next = i + 1 < records.count ? records[i + 1].seconds : r.seconds + 1 / 30
            let color: Color?
            switch r.notCreditedReason {
            case "noFace"?: color = .lightGray
            case "rotating"?: color = Color(red: 255, green: 214, blue: 170)
            default: color = nil
            }
            guard let color else { continue }
            for p in [closurePanel, yawPanel] {
                image.drawRect(Rect(x: x(r.seconds), y: p.top, width: max(1, x(next) - x(r.seconds)), height: p.bottom - p.top),
                               color: color, thickness: -1)
            }
        }
        // Panels, grid and thresholds.
        let tick = end > 30 ? 5.0 : (end > 8 ? 1.0 : 0.5)
        for p in [closurePanel, yawPanel] {
            var t = 0.0
            while t <= end + 1e-9 {
                image.drawLine(from: Point(x: x(t), y: p.top), to: Point(x: x(t), y: p.bottom), color: Color(red: 236, green: 236, blue: 236))
                t += tick
            }
            image.drawRect(Rect(x: left, y: p.top, width: width - left - right, height: p.bottom - p.top), color: .gray)
        }
        var t = 0.0
        while t <= end + 1e-9 {
            image.drawText(FrameAnnotator.fixed(t, tick < 1 ? 1 : 1), at: Point(x: x(t) - 10, y: 580), scale: 0.6, color: .black)
            t += tick
        }
        image.drawText("seconds", at: Point(x: width - right - 60, y: 606), scale: 0.65, color: .black)
        image.drawText("eye closure", at: Point(x: left, y: closurePanel.top - 8), scale: 0.75, color: .black)
        image.drawText("relative yaw (deg, + = subject's left)", at: Point(x: left, y: yawPanel.top - 8), scale: 0.75, color: .black)
        for v in [0.0, 0.5, 1.0] {
            image.drawText(FrameAnnotator.fixed(v, 1), at: Point(x: 24, y: y(v, closurePanel) + 5), scale: 0.6, color: .black)
        }
        for v in [yawPanel.lo, 0, yawPanel.hi] {
            image.drawText("\(Int(v.rounded()))", at: Point(x: 24, y: y(v, yawPanel) + 5), scale: 0.6, color: .black)
        }
        let threshold = policy.blinkClosureThreshold
        image.drawLine(from: Point(x: left, y: y(threshold, closurePanel)), to: Point(x: width - right, y: y(threshold, closurePanel)), color: .red)
        image.drawText("blink \(FrameAnnotator.fixed(threshold, 2))", at: Point(x: width - right - 90, y: y(threshold, closurePanel) - 5), scale: 0.55, color: .red)
        for sign in [-1.0, 1.0] {
            let v = sign * policy.turnYawDegrees
            image.drawLine(from: Point(x: left, y: y(v, yawPanel)), to: Point(x: width - right, y: y(v, yawPanel)), color: .red)
        }
        image.drawLine(from: Point(x: left, y: y(0, yawPanel)), to: Point(x: width - right, y: y(0, yawPanel)), color: .gray)

        // Curves, broken where there is no value.
        func curve(_ value: (TraceRecord) -> Double?, _ panel: (top: Double, bottom: Double, lo: Double, hi: Double), _ color: Color, _ thickness: Int) {
            var run: [Point] = []
            for r in records {
                if let v = value(r) {
                    run.append(Point(x: x(r.seconds), y: y(v, panel)))
                } else {
                    if run.count > 1 { image.drawPolyline(run, color: color, thickness: thickness) }
                    run.removeAll()
                }
            }
            if run.count > 1 { image.drawPolyline(run, color: color, thickness: thickness) }
            if run.count == 1 { image.drawCircle(center: run[0], radius: 2, color: color, thickness: -1) }
        }
        curve(\.eyeClosureLeft, closurePanel, Color(red: 120, green: 170, blue: 235), 1)
        curve(\.eyeClosureRight, closurePanel, Color(red: 200, green: 150, blue: 230), 1)
        curve({ r in
            guard let a = r.eyeClosureLeft, let b = r.eyeClosureRight else { return nil }
            return (a + b) / 2
        }, closurePanel, .black, 2)
        curve(\.relativeYawDegrees, yawPanel, .black, 2)

        // Events.
        func marker(_ s: Double, _ label: String, _ color: Color, row: Int) {
            for p in [closurePanel, yawPanel] {
                image.drawLine(from: Point(x: x(s), y: p.top), to: Point(x: x(s), y: p.bottom), color: color, thickness: 2)
            }
            image.drawText(label, at: Point(x: min(x(s) + 4, width - 150), y: closurePanel.top + 16 + Double(row) * 18), scale: 0.6, color: color, thickness: 1)
        }
        var row = 0
        for (s, event) in events {
            switch event {
            case .autoshot(let still): marker(s, still.framed ? "autoshot" : "autoshot (fallback)", .blue, row: row)
            case .actionCredited(let a):
                marker(s, a.action == .blink ? "blink" : "turn \(a.direction?.rawValue ?? "")", .green, row: row)
            case .snapshot: marker(s, "snapshot", .purple, row: row)
            case .verdict(let v) where v.reason == .timeout: marker(s, "cap", .red, row: row)
            default: continue
            }
            row = (row + 1) % 4
        }
        if let cap, cap <= end { image.drawLine(from: Point(x: x(cap), y: yawPanel.bottom), to: Point(x: x(cap), y: closurePanel.top), color: .red) }
        image.drawText(title, at: Point(x: left, y: 30), scale: 0.9, color: .black, thickness: 2)
        let legend = "grey: no face   orange: device rotating   blue/purple: left/right eye   black: mean"
        image.drawText(legend, at: Point(x: left, y: 606), scale: 0.55, color: .gray)
        return image
    }
}
