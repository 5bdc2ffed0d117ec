import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The numeric address `liveness serve --host` binds. libwebsockets takes an interface name or
/// a numeric address: given a host name such as `localhost` it printed "iface … DOESN'T EXIST",
/// bound nothing and the service still said "listening". Names are resolved here (the first
/// address getaddrinfo gives), and a name taken for loopback must resolve to a loopback address.
enum BindAddress {
    /// The numeric form of `host` (`127.0.0.1`, `::1`, `192.0.2.7`).
    /// - Throws: when the name does not resolve.
    static func numeric(_ host: String) throws(ServiceError) -> String {
        guard !host.isEmpty else { throw ServiceError("--host needs an address or a host name") }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        guard status == 0, let first = result else {
            throw ServiceError("cannot resolve --host \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(first.pointee.ai_addr, first.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            throw ServiceError("cannot resolve --host \(host)")
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether a numeric address is a loopback one (127.0.0.0/8 or ::1).
    static func isLoopback(_ address: String) -> Bool {
        if address == "::1" { return true }
        var v4 = in_addr()
        return inet_pton(AF_INET, address, &v4) == 1 && (UInt32(bigEndian: v4.s_addr) >> 24) == 127
    }
}
