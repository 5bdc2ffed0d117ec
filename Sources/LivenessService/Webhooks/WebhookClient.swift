import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One webhook request: a POST through Foundation's `URLSession` (FoundationNetworking, which is
/// libcurl from Debian's `libcurl4`, installed by Tools/setup.sh).
///
/// Why URLSession and not libwebsockets' client (the service's server library): a delivery is a
/// blocking request made from the dispatcher's own thread, with HTTPS verified against the
/// system's CA store, a deadline on the whole exchange, and redirects decided by a delegate; the
/// libwebsockets client would run on the server's event loop, whose writes happen only in
/// writeable callbacks, so a slow receiver would share the loop with the camera streams.
///
/// Redirects are never followed: the delegate refuses them, and a 3xx answer is a failed attempt
/// (a redirect could lead to a private address the URL rules refuse). Cookies, caches and
/// credentials are off (an ephemeral configuration).
enum WebhookClient {
    /// What an attempt came to.
    struct Outcome: Equatable {
        /// The HTTP status, when an answer came.
        var status: Int?
        /// Why it failed (nil when delivered: a 2xx answer).
        var failure: String?
        var delivered: Bool { failure == nil }
    }

    /// POSTs `body` with `headers` to `url`, within `timeout` seconds for the whole exchange.
    static func post(_ url: URL, body: [UInt8], headers: [(String, String)], timeout: Double) -> Outcome {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.httpShouldHandleCookies = false
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        let delegate = NoRedirects()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        // A task without a completion handler: only then does URLSession ask the delegate about
        // redirects (with a completion handler it follows them on its own).
        let task = session.dataTask(with: request)
        task.resume()
        if delegate.done.wait(timeout: .now() + timeout + 2) == .timedOut {
            task.cancel()
            return Outcome(status: nil, failure: "no answer within \(Int(timeout)) s")
        }
        return delegate.outcome
    }
}

/// Collects one task's answer and refuses every redirect.
private final class NoRedirects: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var redirect: String?
    private var result = WebhookClient.Outcome(status: nil, failure: "no answer")

    var outcome: WebhookClient.Outcome { lock.withLock { result } }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        lock.withLock { redirect = request.url?.absoluteString ?? "?" }
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // The answer's body is not used; nothing is kept.
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.withLock {
            let status = (task.response as? HTTPURLResponse)?.statusCode
            if let error {
                result = WebhookClient.Outcome(status: status, failure: redirect.map { "redirect to \($0) refused" } ?? error.localizedDescription)
            } else if let status, (200..<300).contains(status) {
                result = WebhookClient.Outcome(status: status, failure: nil)
            } else if let status, (300..<400).contains(status) {
                result = WebhookClient.Outcome(status: status, failure: "HTTP \(status): redirect\(redirect.map { " to \($0)" } ?? "") refused (webhooks follow no redirects)")
            } else {
                result = WebhookClient.Outcome(status: status, failure: status.map { "HTTP \($0)" } ?? "no HTTP answer")
            }
        }
        done.signal()
    }
}
