import FaceTracking
import Foundation
import LivenessCore
import LivenessClient
import LivenessService
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The hosted web flow's routes without a browser: what `GET /` and its assets are, the security
/// headers on each, the demo route that exists only with `--demo`, and the guide circle the
/// `session` message gives the page. (The page itself runs in `WebFlowBrowserTests`.)
final class WebFlowTests: XCTestCase {
    private static var model: LandmarkModel? { ServiceTestSupport.model }

    private func server(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws -> LivenessServer {
        try startService(configure)
    }

    func testThePageAndItsAssetsCarryTheSecurityHeaders() throws {
        let server = try server()
        let expected: [String: String] = [
            "/": "text/html; charset=utf-8", "/app.js": "text/javascript; charset=utf-8",
            "/app.css": "text/css; charset=utf-8", "/icon.svg": "image/svg+xml",
        ]
        for (path, type) in expected {
            let response = try fetch(server, path)
            XCTAssertEqual(response.status, 200, path)
            XCTAssertEqual(response.headers["content-type"], type, path)
            XCTAssertFalse(response.body.isEmpty, path)
            // The issue's list: a strict CSP (self only, nothing inline), no caching, no referrer,
            // the camera for this origin only.
            let csp = try XCTUnwrap(response.headers["content-security-policy"], path)
            let directives = Dictionary(uniqueKeysWithValues: csp.split(separator: ";").map { d -> (String, String) in
                let parts = d.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1).map(String.init)
                return (parts[0], parts.count > 1 ? parts[1] : "")
            })
            XCTAssertEqual(directives["default-src"], "'self'", path)
            XCTAssertEqual(directives["script-src"], "'self'", path)
            XCTAssertEqual(directives["style-src"], "'self'", path)
            XCTAssertEqual(directives["connect-src"], "'self'", path)
            XCTAssertEqual(directives["frame-ancestors"], "'none'", path)
            XCTAssertFalse(csp.contains("unsafe"), path)
            XCTAssertEqual(response.headers["cache-control"], "no-store", path)
            XCTAssertEqual(response.headers["referrer-policy"], "no-referrer", path)
            XCTAssertEqual(response.headers["permissions-policy"]?.contains("camera=(self)"), true, path)
            XCTAssertEqual(response.headers["x-content-type-options"], "nosniff", path)
        }
        // Results are never cached either.
        let created = try ServiceClient.request("POST", "/v1/sessions", at: try ServiceAddress(url: server.url))
        let id = try XCTUnwrap(created.json?["id"] as? String)
        XCTAssertEqual(try fetch(server, "/v1/sessions/\(id)").headers["cache-control"], "no-store")
    }

    func testThePageHasNoInlineScriptOrStyle() throws {
        // What the CSP forbids: inline <script> bodies, <style> elements, style="" attributes,
        // on…="" handlers, javascript: URLs. Every script and sheet is a route of its own.
        let server = try server()
        let html = String(decoding: try fetch(server, "/").body, as: UTF8.self)
        let scripts = matches(#"<script\b[^>]*>([\s\S]*?)</script>"#, in: html)
        XCTAssertEqual(scripts.count, 1)
        for script in scripts {
            XCTAssertTrue(script.contains(#"src="/app.js""#), script)
            XCTAssertTrue(matches(#"<script\b[^>]*>\s*</script>"#, in: script).count == 1, "no inline script body: \(script)")
        }
        XCTAssertEqual(matches(#"<style\b"#, in: html), [])
        XCTAssertEqual(matches(#"\sstyle\s*="#, in: html), [])
        XCTAssertEqual(matches(#"\son[a-z]+\s*="#, in: html), [])
        XCTAssertEqual(matches(#"javascript:"#, in: html), [])
        XCTAssertEqual(matches(#"https?://"#, in: html), [], "no third-party resource (no CDN)")
        XCTAssertTrue(html.contains(#"<link rel="stylesheet" href="/app.css">"#))
        // Every id the script looks up exists in the page.
        let script = String(decoding: try fetch(server, "/app.js").body, as: UTF8.self)
        let used = Set(matches(#"\$\('([a-z-]+)'\)"#, in: script).map { String($0.dropFirst(3).dropLast(2)) })
        XCTAssertGreaterThan(used.count, 20)
        for id in used { XCTAssertTrue(html.contains("id=\"\(id)\""), "the page has #\(id)") }
    }

    /// Issue 27: `POST /demo/sessions` took any Origin and any Host, so another site (or a
    /// rebound DNS name) could lock the demo. Only this service's loopback Host and the page's
    /// own Origin are answered; at most two demo checks run at once, a session whose stream never
    /// opened gives way, and a busy demo says so.
    func testTheDemoRouteAnswersItsOwnPageOnlyAndSaysBusy() throws {
        let demo = try server { $0.demo = true }
        let port = demo.port
        func post(host: String, origin: String?) throws -> String {
            try rawExchange(port: port, "POST /demo/sessions HTTP/1.1\r\nHost: \(host)\r\n" + (origin.map { "Origin: \($0)\r\n" } ?? "")
                + "Content-Length: 0\r\nConnection: close\r\n\r\n")
        }
        XCTAssertTrue(try post(host: "evil.example:\(port)", origin: "http://evil.example:\(port)").hasPrefix("HTTP/1.1 403"), "DNS rebinding")
        XCTAssertTrue(try post(host: "127.0.0.1:\(port)", origin: "https://another.example").hasPrefix("HTTP/1.1 403"), "another site's page")
        XCTAssertTrue(try post(host: "127.0.0.1:\(port + 1)", origin: nil).hasPrefix("HTTP/1.1 403"), "another port")
        func created(_ answer: String) throws -> (id: String, token: String) {
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 201"), String(answer.prefix(300)))
            let body = try XCTUnwrap(answer.range(of: "\r\n\r\n")).upperBound
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer[body...].utf8)) as? [String: Any])
            return (try XCTUnwrap(json["id"] as? String), try XCTUnwrap(json["token"] as? String))
        }
        // Three pages in a row: the first session never streams, so the third takes its place.
        let unclaimed = try created(try post(host: "localhost:\(port)", origin: "http://localhost:\(port)"))
        let second = try created(try post(host: "127.0.0.1:\(port)", origin: "http://127.0.0.1:\(port)"))
        let third = try created(try post(host: "127.0.0.1:\(port)", origin: nil))
        XCTAssertEqual(try fetch(demo, "/v1/sessions/\(unclaimed.id)").status, 404, "the unclaimed session gave way")
        var connections: [WebSocketConnection] = []
        for session in [second, third] {
            let connection = try WebSocketConnection(address: try ServiceAddress(url: demo.url), path: "/v1/sessions/\(session.id)/stream",
                                                     token: session.token)
            addTeardownBlock { connection.close() }
            guard case .text? = connection.next(timeout: 10) else { return XCTFail("no session message") }
            connections.append(connection)
        }
        let busy = try post(host: "127.0.0.1:\(port)", origin: "http://127.0.0.1:\(port)")
        XCTAssertTrue(busy.hasPrefix("HTTP/1.1 503"), String(busy.prefix(200)))
        XCTAssertTrue(busy.contains("\"busy\""), busy)
    }

    /// Issue 27: with JavaScript off, a Verify button that does nothing stayed visible. It is
    /// hidden in the HTML (the script shows it) and the noscript text says what is needed.
    func testWithoutJavaScriptTheVerifyButtonIsHidden() throws {
        let html = String(decoding: try fetch(try server(), "/").body, as: UTF8.self)
        XCTAssertTrue(html.contains(#"<button id="verify" class="primary" type="button" hidden>"#), html)
        XCTAssertTrue(html.contains("<noscript>"), html)
    }

    func testTheDemoRouteExistsOnlyWithDemo() throws {
        let plain = try server()
        XCTAssertEqual(try fetch(plain, "/demo/sessions", method: "POST").status, 404)
        XCTAssertTrue(String(decoding: try fetch(plain, "/").body, as: UTF8.self).contains(#"data-demo="off""#))

        let demo = try server { $0.demo = true; $0.apiToken = Array("relying-party-token-0123456789".utf8) }
        XCTAssertTrue(String(decoding: try fetch(demo, "/").body, as: UTF8.self).contains(#"data-demo="on""#))
        let created = try fetch(demo, "/demo/sessions", method: "POST")
        XCTAssertEqual(created.status, 201)
        let body = try XCTUnwrap((try JSONSerialization.jsonObject(with: created.body)) as? [String: Any])
        let id = try XCTUnwrap(body["id"] as? String), token = try XCTUnwrap(body["token"] as? String)
        XCTAssertEqual(body["stream"] as? String, "/v1/sessions/\(id)/stream")
        // The page's session streams like any other, and its result stays the relying party's.
        let connection = try WebSocketConnection(address: try ServiceAddress(url: demo.url), path: "/v1/sessions/\(id)/stream", token: token)
        addTeardownBlock { connection.close() }
        guard case let .text(hello)? = connection.next(timeout: 10) else { return XCTFail("no session message") }
        XCTAssertTrue(hello.contains(#""type":"session""#), hello)
        XCTAssertEqual(try fetch(demo, "/v1/sessions/\(id)").status, 401, "results need the API token")
        XCTAssertEqual(try fetch(demo, "/demo/sessions").status, 404, "GET is not a route")

        // Only loopback binds may have it.
        var open = ServiceConfiguration()
        open.host = "0.0.0.0"
        open.demo = true
        open.apiToken = Array("relying-party-token-0123456789".utf8)
        XCTAssertThrowsError(try LivenessServer(configuration: open, model: try XCTUnwrap(Self.model)))
    }

    func testTheSessionMessageGivesTheSessionPolicysGuideCircle() throws {
        let server = try server()
        let address = try ServiceAddress(url: server.url)
        // The relying party's policy for this session: a smaller circle off centre.
        let created = try ServiceClient.request("POST", "/v1/sessions", at: address,
                                                body: Array(#"{"policy": {"guideRadius": 0.25, "guideCenterX": 0.45, "guideCenterY": 0.55}}"#.utf8))
        XCTAssertEqual(created.status, 201, String(decoding: created.body, as: UTF8.self))
        let id = try XCTUnwrap(created.json?["id"] as? String), token = try XCTUnwrap(created.json?["token"] as? String)
        let connection = try WebSocketConnection(address: address, path: "/v1/sessions/\(id)/stream", token: token)
        addTeardownBlock { connection.close() }
        guard case let .text(hello)? = connection.next(timeout: 10),
              let message = (try? JSONSerialization.jsonObject(with: Data(hello.utf8))) as? [String: Any] else {
            return XCTFail("no session message")
        }
        let guide = try XCTUnwrap(message["guide"] as? [String: Double], hello)
        XCTAssertEqual(guide, ["centerX": 0.45, "centerY": 0.55, "radius": 0.25])

        // Without overrides, the spec's circle (§6): centre (0.5, 0.5), radius 0.3.
        let plain = try ServiceClient.request("POST", "/v1/sessions", at: address)
        let second = try WebSocketConnection(address: address, path: "/v1/sessions/\(try XCTUnwrap(plain.json?["id"] as? String))/stream",
                                             token: try XCTUnwrap(plain.json?["token"] as? String))
        addTeardownBlock { second.close() }
        guard case let .text(text)? = second.next(timeout: 10) else { return XCTFail("no session message") }
        let spec = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        XCTAssertEqual(spec?["guide"] as? [String: Double], ["centerX": 0.5, "centerY": 0.5, "radius": 0.3])
    }

    private func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else { return ["bad pattern \(pattern)"] }
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
    }
}

