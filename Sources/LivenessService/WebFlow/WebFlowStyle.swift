/// `GET /app.css`: the web flow's style sheet. Mobile first (one column, 48 px touch targets,
/// safe-area insets), a card on wider screens; text contrast of at least 4.5:1 on every screen
/// (WCAG AA) and a visible focus ring for keyboard users.
enum WebFlowStyle {
    /// The text of `Resources/app.css`, embedded at build time (`.embedInCode`).
    static let source = String(decoding: PackageResources.app_css, as: UTF8.self)
}
