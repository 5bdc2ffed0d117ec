import LivenessEvidence

/// `liveness keygen`: a new Ed25519 key pair for signing reports (libsodium).
package enum KeygenCommand {
    package static let spec = CommandSpec(
        name: "keygen",
        overview: "Make an Ed25519 key pair for signing reports: liveness.key (private, mode 0600) and liveness.pub.",
        summary: "Make an Ed25519 key pair for signing reports.",
        arguments: [],
        options: [
            .option("--out", "DIR", "The folder for liveness.key and liveness.pub (made with mode 0700 if missing); existing keys are never overwritten.",
                    required: true),
        ],
        positionalCount: 0...0)

    /// Runs the command; exit code 0 when the pair was written, 1 when it could not be (a key
    /// is already there, the folder cannot be written), 2 on a usage error.
    package static func run(_ arguments: [String], console: Console) -> Int32 {
        let begun = spec.begin(arguments, console: console)
        guard let parsed = begun.parsed else { return begun.exitCode }
        guard let directory = parsed.value("--out"), !directory.isEmpty else {
            return console.usageError(UsageError("--out <dir> is required: the folder for the new key pair"), spec: spec)
        }
        do {
            let key = try SigningKey.generate()
            let files = try KeyFiles.create(in: directory, key: key)
            console.out("""
                private key: \(Console.printable(files.privateKey)) (mode 0600; keep it secret: analyze --sign-key, liveness serve)
                public key:  \(Console.printable(files.publicKey)) (give it to verifiers: liveness verify --public-key)
                fingerprint: \(key.publicKey.fingerprint)
                """)
            return 0
        } catch {
            console.error("error: \(Console.printable(error.description))")
            return 1
        }
    }
}
