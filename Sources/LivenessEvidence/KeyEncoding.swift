import Foundation

/// The key file formats: PEM as OpenSSL and every mainstream crypto library write Ed25519 keys
/// (RFC 8410): a private key is PKCS#8 (`-----BEGIN PRIVATE KEY-----`, DER
/// `302e020100300506032b657004220420` + the 32-byte seed), a public key is SubjectPublicKeyInfo
/// (`-----BEGIN PUBLIC KEY-----`, DER `302a300506032b6570032100` + the 32-byte key). The DER
/// prefixes are fixed for Ed25519, so they are compared byte for byte rather than parsed.
enum KeyEncoding {
    /// PKCS#8 v1 prefix of an Ed25519 private key (RFC 8410 §7).
    static let privatePrefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70,
                                         0x04, 0x22, 0x04, 0x20]
    /// SubjectPublicKeyInfo prefix of an Ed25519 public key (RFC 8410 §4).
    static let publicPrefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]
    /// The object identifier 1.3.101.112 (id-Ed25519) as DER, to tell "another algorithm" apart.
    static let ed25519OID: [UInt8] = [0x06, 0x03, 0x2B, 0x65, 0x70]

    static let privateLabel = "PRIVATE KEY"
    static let publicLabel = "PUBLIC KEY"

    /// PEM text: the label's BEGIN line, base64 in 64-character lines, the END line.
    static func pem(_ der: [UInt8], label: String) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines = ["-----BEGIN \(label)-----"]
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The label and DER bytes of the first PEM block in `text`: nil when there is no BEGIN line;
    /// `der` nil when the block has no END line or its body is not base64 (truncated or damaged).
    static func parsePEM(_ text: String) -> (label: String, der: [UInt8]?)? {
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") && $0.count > 16 })
        else { return nil }
        let label = String(lines[begin].dropFirst(11).dropLast(5))
        guard let end = lines[begin...].firstIndex(of: "-----END \(label)-----") else { return (label, nil) }
        let body = lines[(begin + 1)..<end].joined()
        guard let data = Data(base64Encoded: body) else { return (label, nil) }
        return (label, [UInt8](data))
    }

    /// The 32-byte Ed25519 key inside `der` after `prefix`, or a sentence saying why not.
    static func key(in der: [UInt8], prefix: [UInt8], what: String) -> Result<[UInt8], KeyFormatProblem> {
        if der.starts(with: prefix), der.count == prefix.count + 32 { return .success(Array(der[prefix.count...])) }
        let isEd25519 = der.count >= ed25519OID.count && (0...(der.count - ed25519OID.count)).contains {
            Array(der[$0..<($0 + ed25519OID.count)]) == ed25519OID
        }
        if !isEd25519 { return .failure(KeyFormatProblem("holds a \(what) of another algorithm; an Ed25519 key is needed")) }
        return .failure(KeyFormatProblem("holds a \(der.count)-byte \(what) structure, not the \(prefix.count + 32) bytes of an Ed25519 \(what) (damaged or truncated?)"))
    }
}

/// Why a key file's contents are not a usable key (one sentence, without the path).
struct KeyFormatProblem: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
