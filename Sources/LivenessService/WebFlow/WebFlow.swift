import Foundation

/// The hosted web flow of `liveness serve` (docs/web-flow.md): a page that runs the liveness check
/// in a browser tab or an app's WebView from the user's front camera, speaking `liveness-stream/1`
/// over the same WebSocket as any camera client. Everything it needs is compiled into the binary
/// (`WebFlowPage`, `WebFlowScript`, `WebFlowStyle`, `WebFlowIcon`): no build step, no CDN, no
/// framework. The responses carry the service's security headers like every other response
/// (`HTTPResponse.securityHeaders`: a content security policy of 'self' only, so the script and
/// the style are routes of their own, never inline).
///
/// Session handoff: the relying party's backend creates the session (`POST /v1/sessions` with the
/// API token) and opens `/#session=ID&token=TOKEN`; the fragment never reaches a server or a
/// referrer, and the page removes it from the address bar before anything else. With `--demo`
/// (loopback only) the page may create its own session with `POST /demo/sessions`; without it
/// that route does not exist.
struct WebFlow: Sendable {
    /// Whether `POST /demo/sessions` exists (`liveness serve --demo`, loopback only).
    let demo: Bool
    /// The page, marked for demo mode or not (the script reads `data-demo` on `<html>`).
    private let page: [UInt8]

    init(demo: Bool) {
        self.demo = demo
        page = Array(WebFlowPage.source.replacingOccurrences(of: "data-demo=\"off\"", with: "data-demo=\"\(demo ? "on" : "off")\"").utf8)
    }

    /// The page's paths and what they serve.
    static let assets: [String: (contentType: String, body: [UInt8])] = [
        "/app.js": ("text/javascript; charset=utf-8", Array(WebFlowScript.source.utf8)),
        "/app.css": ("text/css; charset=utf-8", Array(WebFlowStyle.source.utf8)),
        "/icon.svg": ("image/svg+xml", Array(WebFlowIcon.source.utf8)),
    ]

    /// The response for a web-flow route, or nil when the request is not one (the API answers it).
    /// `createSession` makes a session with the service's policy (the demo route).
    func respond(_ request: HTTPRequest, createSession: () -> HTTPResponse) -> HTTPResponse? {
        switch (request.method, request.path) {
        case (.get, "/"), (.get, "/index.html"):
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: page)
        case (.get, let path):
            guard let asset = Self.assets[path] else { return nil }
            return HTTPResponse(status: 200, contentType: asset.contentType, body: asset.body)
        case (.post, "/demo/sessions") where demo:
            // The page's own session, with the service's policy (a body is ignored: the page
            // cannot choose its policy). Exists only with --demo, which only a loopback bind allows.
            return createSession()
        default:
            return nil
        }
    }
}
