import Foundation
import LivenessCommands
import LivenessEvidence
import TestSupport
import XCTest

/// Key files and signatures against RFC 8032's test vectors, OpenSSL and Python's hashlib.
final class KeyTests: XCTestCase {
    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var i = text.startIndex
        while i < text.endIndex {
            let j = text.index(i, offsetBy: 2)
            bytes.append(UInt8(text[i..<j], radix: 16)!)
            i = j
        }
        return bytes
    }

    /// A PKCS#8 PEM file as RFC 8410 §7 spells it: the fixed DER prefix, then the 32-byte seed.
    private func writePrivateKey(seed: [UInt8], to path: String, mode: Int = 0o600) throws {
        let der = hex("302e020100300506032b657004220420") + seed
        let pem = "-----BEGIN PRIVATE KEY-----\n\(Data(der).base64EncodedString())\n-----END PRIVATE KEY-----\n"
        try pem.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// RFC 8032 §7.1, tests 1 and 2: the public key derived from the seed and the signature.
    func testRFC8032Vectors() throws {
        let dir = try Fixtures.temporaryDirectory(self).path
        let vectors = [
            ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
             "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
             "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
            ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
             "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
             "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ]
        for (i, (seed, publicKey, message, signature)) in vectors.enumerated() {
            let path = "\(dir)/rfc\(i).key"
            try writePrivateKey(seed: hex(seed), to: path)
            let key = try SigningKey.load(path: path)
            XCTAssertEqual(key.publicKey.bytes, hex(publicKey))
            XCTAssertEqual(key.signature(of: hex(message)), hex(signature))
            XCTAssertTrue(key.publicKey.isValidSignature(hex(signature), of: hex(message)))
            XCTAssertFalse(key.publicKey.isValidSignature(hex(signature), of: hex(message) + [0]))
        }
    }

    func testKeygenWritesAPrivateFileOnlyItsOwnerCanReadAndNeverOverwrites() throws {
        let dir = try Fixtures.temporaryDirectory(self).appendingPathComponent("new/keys").path
        let console = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["keygen", "--out", dir], console: console), 0, console.errors)
        let privatePath = dir + "/liveness.key", publicPath = dir + "/liveness.pub"
        XCTAssertEqual(try mode(privatePath), 0o600)
        XCTAssertEqual(try mode(publicPath), 0o644)
        XCTAssertEqual(try mode(dir), 0o700)
        let key = try SigningKey.load(path: privatePath)
        XCTAssertEqual(try PublicKey.load(path: publicPath), key.publicKey)
        XCTAssertTrue(console.printed.contains("fingerprint: \(key.publicKey.fingerprint)"), console.printed)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["liveness.key", "liveness.pub"])

        let before = try Data(contentsOf: URL(fileURLWithPath: privatePath))
        let again = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["keygen", "--out", dir], console: again), 1)
        XCTAssertTrue(again.errors.contains("liveness.key: already exists; keygen never overwrites a key"), again.errors)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: privatePath)), before)

        // Only the public key left: still refused, and no private key appears beside it.
        try FileManager.default.removeItem(atPath: privatePath)
        XCTAssertEqual(LivenessCLI.run(["keygen", "--out", dir], console: Console.capturing()), 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: privatePath))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["liveness.pub"])

        let usage = Console.capturing()
        XCTAssertEqual(LivenessCLI.run(["keygen"], console: usage), 2)
        XCTAssertTrue(usage.errors.contains("--out <dir> is required"), usage.errors)
    }

    func testOpenSSLReadsOurKeysAndWeReadOpenSSLKeys() throws {
        let dir = try Fixtures.temporaryDirectory(self).path
        let ours = try KeyFiles.create(in: dir + "/ours", key: try SigningKey.generate())
        let derived = try ExternalTools.openssl(["pkey", "-in", ours.privateKey, "-pubout"])
        XCTAssertEqual(derived.status, 0, derived.errors)
        XCTAssertEqual(derived.text, try String(contentsOfFile: ours.publicKey, encoding: .utf8))

        let theirs = dir + "/openssl.key"
        let made = try ExternalTools.openssl(["genpkey", "-algorithm", "ed25519", "-out", theirs])
        XCTAssertEqual(made.status, 0, made.errors)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: theirs)
        let publicPEM = try ExternalTools.openssl(["pkey", "-in", theirs, "-pubout"])
        XCTAssertEqual(try SigningKey.load(path: theirs).publicKey.pem, publicPEM.text)
    }

    func testOpenSSLVerifiesOurSignatures() throws {
        let dir = try Fixtures.temporaryDirectory(self).path
        let key = try SigningKey.generate()
        let files = try KeyFiles.create(in: dir, key: key)
        let message = Array("a report's canonical form ✓".utf8)
        try Data(message).write(to: URL(fileURLWithPath: dir + "/message"))
        try Data(key.signature(of: message)).write(to: URL(fileURLWithPath: dir + "/signature"))
        let good = try ExternalTools.openssl(["pkeyutl", "-verify", "-pubin", "-inkey", files.publicKey, "-rawin",
                                              "-in", dir + "/message", "-sigfile", dir + "/signature"])
        XCTAssertEqual(good.status, 0, good.text + good.errors)
        XCTAssertTrue(good.text.contains("Signature Verified Successfully"), good.text)
        try Data(message + [0x21]).write(to: URL(fileURLWithPath: dir + "/message"))
        let bad = try ExternalTools.openssl(["pkeyutl", "-verify", "-pubin", "-inkey", files.publicKey, "-rawin",
                                             "-in", dir + "/message", "-sigfile", dir + "/signature"])
        XCTAssertNotEqual(bad.status, 0)
    }

    /// docs/signing.md: the first 16 bytes of SHA-256 over the 32 key bytes, computed by hashlib.
    func testFingerprintIsTheDocumentedDigest() throws {
        let dir = try Fixtures.temporaryDirectory(self).path
        let key = try SigningKey.generate()
        let files = try KeyFiles.create(in: dir, key: key)
        let python = try ExternalTools.python("""
            import base64, hashlib, sys
            lines = open(sys.argv[1]).read().split('\\n')
            der = base64.b64decode(''.join(l for l in lines if l and not l.startswith('-----')))
            print('ed25519:' + hashlib.sha256(der[-32:]).hexdigest()[:32])
            """, [files.publicKey])
        XCTAssertEqual(python.status, 0, python.errors)
        XCTAssertEqual(python.text.trimmingCharacters(in: .newlines), key.publicKey.fingerprint)
        XCTAssertEqual(PublicKey(base64: key.publicKey.base64), key.publicKey)
    }

    func testUnusableKeyFilesAreRefusedWithTheReason() throws {
        let dir = try Fixtures.temporaryDirectory(self).path
        let pair = try KeyFiles.create(in: dir + "/pair", key: try SigningKey.generate())
        func write(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
            let path = dir + "/" + name
            try text.write(toFile: path, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            return path
        }
        let privateText = try String(contentsOfFile: pair.privateKey, encoding: .utf8)
        let short = hex("302d020100300506032b657004210420") + [UInt8](repeating: 7, count: 31)
        let rsa = dir + "/rsa.key"
        let made = try ExternalTools.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", rsa])
        XCTAssertEqual(made.status, 0, made.errors)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: rsa)
        let fifo = dir + "/fifo.key"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let cases: [(String, String)] = [
            (try write("empty.key", ""), "is empty"),
            (pair.publicKey, "holds a public key; signing needs the private key"),
            (try write("open.key", privateText, mode: 0o644), "others can access (mode 0644); only its owner may: chmod 600"),
            (try write("truncated.key", String(privateText.prefix(50))), "damaged or truncated"),
            (try write("garbled.key", privateText.replacingOccurrences(of: "MC4CAQAw", with: "MC4C*QAw")), "damaged or truncated"),
            (try write("short.key", "-----BEGIN PRIVATE KEY-----\n\(Data(short).base64EncodedString())\n-----END PRIVATE KEY-----\n"),
             "holds a 47-byte private key structure, not the 48 bytes"),
            (rsa, "another algorithm"),
            (try write("ssh.key", "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n"), "'OPENSSH PRIVATE KEY' block"),
            (try write("text.key", "hello\n"), "no '-----BEGIN PRIVATE KEY-----' line"),
            (fifo, "not a regular file"),
            (dir, "is a directory"),
            (dir + "/missing.key", "no such file"),
        ]
        for (path, fragment) in cases {
            XCTAssertThrowsError(try SigningKey.load(path: path), path) { error in
                XCTAssertTrue("\(error)".hasPrefix(path + ": ") && "\(error)".contains(fragment), "\(path): \(error)")
            }
        }
        XCTAssertThrowsError(try PublicKey.load(path: pair.privateKey)) { error in
            XCTAssertTrue("\(error)".contains("holds a private key; give the public key"), "\(error)")
        }
        XCTAssertThrowsError(try PublicKey.load(path: try write("bad.pub", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n"))) { error in
            XCTAssertTrue("\(error)".contains("holds a 12-byte public key structure"), "\(error)")
        }
        // One line of base64, as /v1/capabilities publishes the key, is a public key file too.
        let key = try PublicKey.load(path: pair.publicKey)
        XCTAssertEqual(try PublicKey.load(path: try write("line.pub", key.base64 + "\n")), key)
    }
}
