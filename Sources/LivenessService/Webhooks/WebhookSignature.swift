import Foundation
import LivenessEvidence
import LivenessKit
import LivenessStore

/// The headers of one webhook request (docs/webhooks.md, "Verifying a delivery"):
///
/// * `Liveness-Webhook-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256 under the shared secret
///   (`--webhook-secret-file`) of `<t>.<delivery id>.<body>`. The timestamp and the delivery id are
///   signed with the body, so a receiver that rejects old timestamps (5 minutes) and delivery ids
///   it has seen stops replays.
/// * `Liveness-Delivery-Id`, `Liveness-Session-Id`, `Liveness-Delivery-Attempt`.
/// * With `--sign-key`, `Liveness-Report-Signature`: the session's `report.sig` (format
///   `liveness-signature/1`, docs/signing.md) without its `report` member, compact JSON in base64
///   (standard alphabet, one line). The body is that member: a verifier puts it back and checks
///   the Ed25519 signature. Detached, the header stays about 1 KB (the whole `report.sig` of a
///   passed session is 7 KB in base64, near the 8 KB a line that proxies such as nginx accept).
enum WebhookSignature {
    /// The header names, lower case.
    static let signatureHeader = "liveness-webhook-signature"
    static let deliveryHeader = "liveness-delivery-id"
    static let sessionHeader = "liveness-session-id"
    static let attemptHeader = "liveness-delivery-attempt"
    static let reportSignatureHeader = "liveness-report-signature"

    /// The HMAC header's value for `body` of delivery `deliveryID` at `timestamp` (seconds).
    static func value(secret: [UInt8], timestamp: Int, deliveryID: String, body: [UInt8]) -> String {
        let code = HMACSHA256.code(key: secret, Array("\(timestamp).\(deliveryID).".utf8), body)
        return "t=\(timestamp),v1=" + code.map { String(format: "%02x", $0) }.joined()
    }

    /// Every header of the request for `delivery`, signed at `now`.
    static func headers(for delivery: Delivery, secret: [UInt8], now: Date) -> [(String, String)] {
        var headers: [(String, String)] = [
            ("content-type", "application/json"),
            ("user-agent", "liveness/\(LivenessEngine.version) webhook"),
            (deliveryHeader, delivery.id),
            (sessionHeader, delivery.sessionID),
            (attemptHeader, String(delivery.attempts)),
            (signatureHeader, value(secret: secret, timestamp: Int(now.timeIntervalSince1970), deliveryID: delivery.id, body: delivery.report)),
        ]
        if let signature = delivery.signature, let detached = detached(signature) {
            headers.append((reportSignatureHeader, detached))
        }
        return headers
    }

    /// `report.sig` without its `report` member, in canonical form (compact, keys sorted), in
    /// base64; nil when it is not a JSON object. Its other members are strings, whole numbers and
    /// nulls, which the canonical form writes as they were.
    static func detached(_ envelope: [UInt8]) -> String? {
        guard let value = try? CanonicalJSON.parse(envelope), case .object = value else { return nil }
        return Data(CanonicalJSON.encode(value.removing("report"))).base64EncodedString()
    }
}
