/// `GET /`: the hosted web flow's one page. Every screen is a `<section class="screen">`; the
/// script (`/app.js`) shows one at a time. No inline script or style (the CSP forbids both):
/// the SVG overlay's geometry is set by the script through attributes.
enum WebFlowPage {
    /// The text of `Resources/index.html`, embedded at build time (`.embedInCode`).
    static let source = String(decoding: PackageResources.index_html, as: UTF8.self)
}
