import Foundation
import LivenessClient
import LivenessService
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Debian's `chromium`, headless, started for one test with a profile of its own and driven over
/// the Chrome DevTools protocol (a WebSocket: our libwebsockets client in `plain` mode). Throws
/// `XCTSkip` with the reason when chromium is not installed or cannot start (a machine without
/// it); anything that goes wrong after it started is a failure.
final class Chromium {
    /// Where Debian installs it (`Tools/setup.sh`), or `$LIVENESS_CHROMIUM`.
    static var executable: String? {
        if let path = ProcessInfo.processInfo.environment["LIVENESS_CHROMIUM"], !path.isEmpty { return path }
        return ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private let process: Process
    private let log: URL
    let devToolsPort: Int

    /// Starts chromium. `fakeCamera`: a `.y4m` or `.mjpeg` file served as the camera (looped), with
    /// the permission prompt answered yes unless `promptForCamera`; nil: no fake camera at all.
    init(in directory: URL, fakeCamera: String?, promptForCamera: Bool = false) throws {
        guard let executable = Self.executable else {
            throw Skip.unavailable("chromium is not installed (Tools/setup.sh --test installs Debian's chromium); the browser tests cannot run")
        }
        let profile = directory.appendingPathComponent("chromium-profile")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        log = directory.appendingPathComponent("chromium.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        var arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--remote-debugging-port=0", "--user-data-dir=\(profile.path)",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-background-timer-throttling",
            "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
            "--window-size=390,844",
        ]
        if let fakeCamera {
            arguments += ["--use-fake-device-for-media-stream", "--use-file-for-fake-video-capture=\(fakeCamera)"]
            if !promptForCamera { arguments.append("--use-fake-ui-for-media-stream") }
        }
        arguments.append("about:blank")
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw Skip.unavailable("chromium could not start: \(error)")
        }
        // Chromium writes the port it picked to DevToolsActivePort in the profile.
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        let deadline = Date().addingTimeInterval(45)
        var port: Int?
        while Date() < deadline {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let first = text.split(separator: "\n").first,
               let number = Int(first), number > 0 {
                port = number
                break
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        guard let port else {
            let tail = Self.tail(of: log)
            Self.stop(process)
            throw Skip.unavailable("chromium could not start (no DevTools port within 45 s): \(tail)")
        }
        devToolsPort = port
    }

    deinit { close() }

    /// Ends the browser (SIGTERM to its process, SIGKILL after 5 s).
    func close() { Self.stop(process) }

    private static func stop(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    private static func tail(of file: URL) -> String {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.contains("dbus") }.suffix(5).joined(separator: " | ")
    }

    /// The first page target's DevTools session.
    func page() throws -> DevToolsPage {
        let address = try ServiceAddress(url: "http://127.0.0.1:\(devToolsPort)")
        let response = try ServiceClient.request("GET", "/json/list", at: address)
        let targets = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [[String: Any]] ?? []
        guard let target = targets.first(where: { $0["type"] as? String == "page" }),
              let url = target["webSocketDebuggerUrl"] as? String, let range = url.range(of: "/devtools/") else {
            throw DevToolsError("no page target in \(String(decoding: response.body, as: UTF8.self))")
        }
        let socket = try WebSocketConnection(address: address, path: String(url[range.lowerBound...]), token: nil, plain: true)
        return DevToolsPage(socket: socket)
    }
}

struct DevToolsError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One page's DevTools session: commands with their answers, and the events that came meanwhile.
final class DevToolsPage {
    private let socket: WebSocketConnection
    private var nextID = 1
    /// Every event received so far (`method`, `params`), in order.
    private(set) var events: [(method: String, params: [String: Any])] = []

    init(socket: WebSocketConnection) { self.socket = socket }

    func close() { socket.close() }

    /// Sends a command and waits for its result.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:], timeout: Double = 30) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        let data = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params])
        socket.send(text: String(decoding: data, as: UTF8.self))
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let message = socket.next(timeout: deadline.timeIntervalSinceNow) else { break }
            guard case let .text(text) = message else { throw DevToolsError("the DevTools socket closed during \(method)") }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { continue }
            if let event = object["method"] as? String {
                events.append((event, object["params"] as? [String: Any] ?? [:]))
            } else if object["id"] as? Int == id {
                if let error = object["error"] as? [String: Any] { throw DevToolsError("\(method): \(error)") }
                return object["result"] as? [String: Any] ?? [:]
            }
        }
        throw DevToolsError("\(method): no answer within \(Int(timeout)) s")
    }

    /// Evaluates a JavaScript expression in the page (promises awaited) and returns its value.
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] { throw DevToolsError("\(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// A key pressed and released (`Tab`, `Enter`, `Escape`, ` `).
    func press(_ key: String) throws {
        let codes: [String: (code: String, vk: Int, text: String?)] = [
            "Tab": ("Tab", 9, nil), "Enter": ("Enter", 13, "\r"), "Escape": ("Escape", 27, nil), " ": ("Space", 32, " "),
        ]
        guard let k = codes[key] else { throw DevToolsError("no key code for \(key)") }
        var down: [String: Any] = ["type": k.text == nil ? "rawKeyDown" : "keyDown", "key": key, "code": k.code,
                                   "windowsVirtualKeyCode": k.vk, "nativeVirtualKeyCode": k.vk]
        if let text = k.text { down["text"] = text; down["unmodifiedText"] = text }
        try call("Input.dispatchKeyEvent", down)
        try call("Input.dispatchKeyEvent", ["type": "keyUp", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk,
                                            "nativeVirtualKeyCode": k.vk])
    }

    /// A mouse click in the middle of the element that `selector` finds.
    func click(_ selector: String) throws {
        guard let box = try evaluate("""
            (() => { const r = document.querySelector(\(Self.quoted(selector))).getBoundingClientRect();
                     return [r.left + r.width / 2, r.top + r.height / 2]; })()
            """) as? [Double], box.count == 2 else { throw DevToolsError("no element \(selector)") }
        for type in ["mousePressed", "mouseReleased"] {
            try call("Input.dispatchMouseEvent", ["type": type, "x": box[0], "y": box[1], "button": "left", "clickCount": 1])
        }
    }

    /// A PNG of the viewport.
    func screenshot() throws -> Data {
        let result = try call("Page.captureScreenshot", ["format": "png"])
        guard let base64 = result["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw DevToolsError("Page.captureScreenshot returned no image")
        }
        return png
    }

    /// Reads the events that arrived since the last command (without sending one).
    func drain() {
        while let message = socket.next(timeout: 0), case let .text(text) = message {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                  let event = object["method"] as? String else { continue }
            events.append((event, object["params"] as? [String: Any] ?? [:]))
        }
    }

    /// A JavaScript string literal.
    static func quoted(_ s: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [s])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
