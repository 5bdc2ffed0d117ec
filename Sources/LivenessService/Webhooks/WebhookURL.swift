import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A callback URL that the service may POST results to (docs/webhooks.md, "Which URLs"):
///
/// * `https`, or `http` to a loopback host only (`localhost`, `127.0.0.0/8`, `::1`): a result is
///   personal data and must not cross a network in clear;
/// * a host, no user name or password (they would be stored in clear), no fragment, at most
///   2048 characters;
/// * an IP literal must be a public address: private (`10/8`, `172.16/12`, `192.168/16`,
///   `fc00::/7`), shared (`100.64/10`), link-local (`169.254/16`, where cloud metadata services
///   answer, and `fe80::/10`), unspecified, multicast and reserved addresses are refused;
/// * a host name is resolved before every attempt, and the attempt fails when any of its
///   addresses is one of those (`refusedAddress`). Loopback hosts are exempt: the operator runs
///   the receiver on the same machine.
public struct WebhookURL: Sendable, Equatable {
    /// The URL as given.
    public let text: String
    /// The host, without brackets for IPv6.
    public let host: String
    /// True for `localhost`, `127.0.0.0/8` and `::1`: plain http is allowed, no address check.
    public let isLoopback: Bool

    /// The longest URL accepted, in characters.
    public static let maximumLength = 2048

    /// Checks `text` against the rules above without resolving anything (this runs on the event
    /// loop when a session is created).
    /// - Throws: a sentence saying which rule the URL breaks.
    public static func validate(_ text: String) throws(ServiceError) -> WebhookURL {
        guard text.count <= maximumLength else { throw ServiceError("the callback URL is longer than \(maximumLength) characters") }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              var host = components.host, !host.isEmpty else {
            throw ServiceError("the callback URL \(text.debugDescription) is not an absolute http(s) URL with a host")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = host.lowercased()
        guard scheme == "https" || scheme == "http" else {
            throw ServiceError("the callback URL must be https (http only to a loopback host), not \(scheme)")
        }
        guard components.user == nil && components.password == nil else {
            throw ServiceError("the callback URL must not hold a user name or password (it would be stored in clear); authenticate the webhook by its HMAC signature")
        }
        guard components.fragment == nil else { throw ServiceError("the callback URL must not have a fragment (#…)") }
        let loopback = isLoopbackHost(host)
        if scheme == "http" && !loopback {
            throw ServiceError("the callback URL must be https: plain http is allowed to a loopback host only (localhost, 127.0.0.1, ::1), not \(host)")
        }
        if !loopback, let address = IPAddress(host), !address.isPublic {
            throw ServiceError("the callback URL's host \(host) is a private, link-local, metadata or reserved address; webhooks go to public addresses (or loopback)")
        }
        return WebhookURL(text: text, host: host, isLoopback: loopback)
    }

    /// True for the loopback names and addresses.
    static func isLoopbackHost(_ host: String) -> Bool {
        if host == "localhost" || host == "localhost." { return true }
        return IPAddress(host)?.isLoopback ?? false
    }

    /// Resolves the host (`getaddrinfo`) and says why the URL must not be used now: a name that
    /// does not resolve, or resolves to any address that is not public. Nil when it may be used
    /// (always for loopback hosts). Blocks for the resolver: call it off the event loop.
    public func refusedAddress() -> String? {
        if isLoopback { return nil }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            return "cannot resolve \(host) (\(String(cString: gai_strerror(status))))"
        }
        defer { freeaddrinfo(list) }
        var node: UnsafeMutablePointer<addrinfo>? = first
        var any = false
        while let entry = node {
            if let address = IPAddress(entry.pointee.ai_addr) {
                any = true
                if !address.isPublic { return "\(host) resolves to \(address), a private, loopback, link-local or reserved address: refused" }
            }
            node = entry.pointee.ai_next
        }
        return any ? nil : "\(host) resolves to no IP address"
    }
}

/// An IPv4 or IPv6 address, and the classes of addresses webhooks must not reach.
struct IPAddress: CustomStringConvertible, Equatable {
    /// 4 or 16 bytes, network order.
    let bytes: [UInt8]

    /// Parses a numeric address (`inet_pton`); nil for anything else (a host name).
    init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// From a socket address of `getaddrinfo`.
    init?(_ address: UnsafeMutablePointer<sockaddr>?) {
        guard let address else { return nil }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in withUnsafeBytes(of: p.pointee.sin_addr) { Array($0) } }
        case AF_INET6:
            bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in withUnsafeBytes(of: p.pointee.sin6_addr) { Array($0) } }
        default:
            return nil
        }
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The IPv4 address an IPv6 one maps (`::ffff:a.b.c.d`), if it does.
    private var mappedV4: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return IPAddress(bytes: Array(bytes[12..<16]))
    }

    var isLoopback: Bool {
        if bytes.count == 4 { return bytes[0] == 127 }
        if let v4 = mappedV4 { return v4.isLoopback }
        return bytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// Not loopback, private, shared, link-local (metadata), unspecified, multicast, documentation
    /// or reserved.
    var isPublic: Bool {
        if bytes.count == 4 {
            let (a, b, c) = (bytes[0], bytes[1], bytes[2])
            if a == 0 || a == 10 || a == 127 || a >= 224 { return false }          // this network, private, loopback, multicast/reserved
            if a == 100 && (b & 0xC0) == 64 { return false }                       // 100.64/10 shared (carrier-grade NAT)
            if a == 169 && b == 254 { return false }                               // link-local, cloud metadata 169.254.169.254
            if a == 172 && (b & 0xF0) == 16 { return false }                       // 172.16/12
            if a == 192 && b == 168 { return false }                               // 192.168/16
            if a == 192 && b == 0 && (c == 0 || c == 2) { return false }           // 192.0.0/24 protocol, 192.0.2/24 documentation
            if a == 198 && (b & 0xFE) == 18 { return false }                       // 198.18/15 benchmarking
            if a == 198 && b == 51 && c == 100 { return false }                    // documentation
            if a == 203 && b == 0 && c == 113 { return false }                     // documentation
            return true
        }
        if let v4 = mappedV4 { return v4.isPublic }
        if bytes.allSatisfy({ $0 == 0 }) || isLoopback { return false }          // :: and ::1
        if (bytes[0] & 0xFE) == 0xFC { return false }                              // fc00::/7 unique local (fd00:ec2::254 metadata)
        if bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0x80 { return false }          // fe80::/10 link-local
        if bytes[0] == 0xFF { return false }                                       // multicast
        if bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0D && bytes[3] == 0xB8 { return false }  // 2001:db8::/32 documentation
        if bytes[0..<12].allSatisfy({ $0 == 0 }) { return false }                  // ::a.b.c.d (deprecated compatible)
        return true
    }

    var description: String {
        var buffer = [CChar](repeating: 0, count: 64)
        var copy = bytes
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = copy.withUnsafeMutableBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
