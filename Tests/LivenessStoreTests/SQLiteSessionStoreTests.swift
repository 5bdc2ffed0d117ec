import Foundation
import LivenessEvidence
import LivenessStore
import TestSupport
import XCTest

/// The SQLite session store on its own, with time as an input. The oracle is never the code under
/// test: Python's `sqlite3` module (the SQLite library through another binding) reads the file,
/// `hashlib` recomputes the token hashes, and the raw bytes of the database and its log are
/// searched for what must not be there in clear.
final class SQLiteSessionStoreTests: XCTestCase {
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private func key(_ byte: UInt8 = 7) throws -> StoreKey { try StoreKey(bytes: [UInt8](repeating: byte, count: 32)) }

    private func newSession(_ id: String, token: String, at time: Date? = nil, expiresIn: Double = 180) -> NewSession {
        let created = time ?? t0
        return NewSession(id: id, tokenSHA256: SHA256Digest(of: Array(token.utf8)).bytes, policy: Array(#"{"turnYawDegrees":7.5}"#.utf8),
                          seed: UInt64.max - 1, createdAt: created, expiresAt: created.addingTimeInterval(expiresIn))
    }

    private func finished(_ report: String, autoshot: [UInt8]? = nil, snapshot: [UInt8]? = nil) -> FinishedSession {
        FinishedSession(report: Array(report.utf8), status: autoshot == nil ? "failed" : "passed", reason: autoshot == nil ? "timeout" : nil,
                        signature: Array("sig".utf8), promptLog: nil, prompted: false, autoshot: autoshot, snapshot: snapshot)
    }

    private func hash(_ token: String) -> [UInt8] { SHA256Digest(of: Array(token.utf8)).bytes }

    /// Runs a Python program with `sqlite3` over the store's file; returns what it printed.
    private func python(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", program] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, program)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `SQL` over the file through Python's sqlite3, one line per row, columns joined by `|`.
    private func sql(_ directory: URL, _ query: String) throws -> [String] {
        let text = try python("""
            import sqlite3, sys
            db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
            for row in db.execute(sys.argv[2]):
                print("|".join("" if v is None else (v.hex() if isinstance(v, bytes) else str(v)) for v in row))
            """, [directory.appendingPathComponent(SQLiteSessionStore.fileName).path, query])
        return text.isEmpty ? [] : text.components(separatedBy: "\n")
    }

    func testASessionIsKeptWithItsTokenHashedAndItsResultReadBack() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let store = try SQLiteSessionStore(directory: dir.path, key: try key())
        try store.create(newSession("s1", token: "0123456789abcdef0123456789abcdef"))
        XCTAssertEqual(try store.claim(id: "s1", tokenSHA256: hash("wrong"), owner: "a", now: t0), .badToken)
        XCTAssertEqual(try store.claim(id: "nosuch", tokenSHA256: hash("x"), owner: "a", now: t0), .unknown)
        guard case let .claimed(claimed) = try store.peek(id: "s1", tokenSHA256: hash("0123456789abcdef0123456789abcdef"), now: t0) else {
            return XCTFail("the peek")
        }
        XCTAssertEqual(claimed.state, .created, "a peek claims nothing")
        guard case let .claimed(session) = try store.claim(id: "s1", tokenSHA256: hash("0123456789abcdef0123456789abcdef"), owner: "a",
                                                            now: t0.addingTimeInterval(1)) else { return XCTFail("the claim") }
        XCTAssertEqual(session.state, .streaming)
        XCTAssertEqual(session.seed, UInt64.max - 1)
        XCTAssertEqual(session.owner, "a")
        XCTAssertEqual(try store.claim(id: "s1", tokenSHA256: hash("0123456789abcdef0123456789abcdef"), owner: "b", now: t0), .alreadyStarted)
        XCTAssertFalse(try store.finish(id: "s1", owner: "b", result: finished("{}"), now: t0), "only the owner finishes it")
        XCTAssertTrue(try store.finish(id: "s1", owner: "a", result: finished(#"{"verdict":"x"}"#, autoshot: [1, 2, 3], snapshot: [4, 5]),
                                       now: t0.addingTimeInterval(2)))
        XCTAssertEqual(try store.peek(id: "s1", tokenSHA256: hash("0123456789abcdef0123456789abcdef"), now: t0), .unknown,
                       "a finished session opens no stream")
        let stored = try XCTUnwrap(try store.session(id: "s1"))
        XCTAssertEqual(stored.state, .finished)
        XCTAssertEqual(stored.report, Array(#"{"verdict":"x"}"#.utf8))
        XCTAssertEqual(stored.signature, Array("sig".utf8))
        XCTAssertEqual(stored.stills, [.autoshot, .snapshot])
        XCTAssertEqual(try store.still(id: "s1", kind: .autoshot), [1, 2, 3])
        XCTAssertEqual(try store.still(id: "s1", kind: .snapshot), [4, 5])

        // Independently: the row as another SQLite binding reads it, the hash as hashlib computes it.
        let row = try sql(dir, "SELECT id, state, status, reason, owner, hex(token_sha256) FROM sessions")
        let expected = try python("import hashlib; print(hashlib.sha256(b'0123456789abcdef0123456789abcdef').hexdigest().upper())", [])
        XCTAssertEqual(row, ["s1|finished|passed||a|\(expected)"])
        XCTAssertEqual(try sql(dir, "PRAGMA journal_mode"), ["wal"])
        let bytes = try fileBytes(dir)
        XCTAssertNil(bytes.range(of: Data("0123456789abcdef0123456789abcdef".utf8)), "the token is never stored in clear")
        // Mode 0600 for the file, 0700 for a folder the store made.
        let nested = dir.appendingPathComponent("a/b")
        _ = try SQLiteSessionStore(directory: nested.path, key: try key())
        let attributes = try FileManager.default.attributesOfItem(atPath: nested.appendingPathComponent(SQLiteSessionStore.fileName).path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(((try FileManager.default.attributesOfItem(atPath: nested.path))[.posixPermissions] as? NSNumber)?.intValue, 0o700)
    }

    /// The single use under contention: two connections (as two instances on one machine would
    /// have) and many threads claim every session at once; exactly one claim of each wins.
    func testExactlyOneOfManyConcurrentClaimsWinsAcrossTwoConnections() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let stores = [try SQLiteSessionStore(directory: dir.path, key: try key()), try SQLiteSessionStore(directory: dir.path, key: try key())]
        let sessions = 20, claimants = 16
        for i in 0..<sessions { try stores[i % 2].create(newSession("c\(i)", token: "token-\(i)")) }
        let wins = Tally()
        let now = t0
        let hashes = (0..<sessions).map { hash("token-\($0)") }
        for i in 0..<sessions {
            DispatchQueue.concurrentPerform(iterations: claimants) { n in
                let outcome = try? stores[n % 2].claim(id: "c\(i)", tokenSHA256: hashes[i], owner: "instance-\(n % 2)-\(n)", now: now)
                if case .claimed? = outcome { wins.add("c\(i)") } else if outcome != .alreadyStarted { wins.add("unexpected") }
            }
        }
        for i in 0..<sessions { XCTAssertEqual(wins.count("c\(i)"), 1, "c\(i)") }
        XCTAssertEqual(wins.count("unexpected"), 0)
        XCTAssertEqual(try sql(dir, "SELECT count(*) FROM sessions WHERE state = 'streaming' AND owner IS NOT NULL"), ["\(sessions)"])
    }

    /// The webhook outbox (docs/webhooks.md): `OutboxScenario`, with Python's sqlite3 as the oracle.
    func testTheWebhookOutboxQueuesLeasesRetriesAndSurvivesReopening() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let key = try key()
        try OutboxScenario(open: { try SQLiteSessionStore(directory: dir.path, key: key) }, sql: { try self.sql(dir, $0) }, table: "outbox").run()
    }

    func testEachDueDeliveryIsLeasedOnceAmongManyThreadsOnTwoConnections() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let key = try key()
        try OutboxScenario(open: { try SQLiteSessionStore(directory: dir.path, key: key) }, sql: { try self.sql(dir, $0) },
                           table: "outbox").runConcurrentLeases()
    }

    /// A store written before webhooks (schema 1: no outbox, no callback_url) is brought to
    /// schema 2 when opened, its sessions kept.
    func testASchema1StoreIsUpgradedWhenOpened() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let store = try SQLiteSessionStore(directory: dir.path, key: try key())
        try store.create(newSession("old", token: "t"))
        store.close()
        // Back to schema 1, through another SQLite binding.
        _ = try python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript("DROP TABLE outbox; ALTER TABLE sessions DROP COLUMN callback_url; UPDATE meta SET value = 1 WHERE key = 'schema';")
            db.commit()
            """, [dir.appendingPathComponent(SQLiteSessionStore.fileName).path])
        XCTAssertEqual(try sql(dir, "SELECT value FROM meta WHERE key = 'schema'"), ["1"])
        let upgraded = try SQLiteSessionStore(directory: dir.path, key: try key())
        XCTAssertEqual(try sql(dir, "SELECT value FROM meta WHERE key = 'schema'"), ["2"])
        XCTAssertEqual(try sql(dir, "SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'callback_url'"), ["1"])
        XCTAssertEqual(try upgraded.session(id: "old")?.state, .created)
        XCTAssertEqual(try upgraded.outboxStatus(), OutboxStatus(pending: 0, oldestPending: nil, dead: 0))
    }

    func testTheSweeperDeletesWhatHasExpiredAndNothingElse() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let store = try SQLiteSessionStore(directory: dir.path, key: try key())
        try store.create(newSession("old", token: "t1"))
        try store.create(newSession("young", token: "t2"))
        try store.create(newSession("unused", token: "t3", expiresIn: 180))
        try store.create(newSession("live", token: "t4", expiresIn: 10_000))
        for (id, token) in [("old", "t1"), ("young", "t2")] {
            guard case .claimed = try store.claim(id: id, tokenSHA256: hash(token), owner: "a", now: t0) else { return XCTFail(id) }
        }
        XCTAssertTrue(try store.finish(id: "old", owner: "a", result: finished("{}", autoshot: [9], snapshot: [9]), now: t0))
        XCTAssertTrue(try store.finish(id: "young", owner: "a", result: finished("{}"), now: t0.addingTimeInterval(500)))
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(100), retentionSeconds: 600), SweepResult(retained: 0, expired: 0))
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(700), retentionSeconds: 600), SweepResult(retained: 1, expired: 1))
        XCTAssertEqual(try sql(dir, "SELECT id FROM sessions ORDER BY id"), ["live", "young"])
        XCTAssertEqual(try sql(dir, "SELECT count(*) FROM stills"), ["0"])
        XCTAssertNil(try store.session(id: "old"))
        // A shorter retention applies to what is already stored.
        XCTAssertEqual(try store.sweep(now: t0.addingTimeInterval(700), retentionSeconds: 100), SweepResult(retained: 1, expired: 0))
        XCTAssertEqual(try sql(dir, "SELECT id FROM sessions"), ["live"])
    }

    func testErasureRemovesTheSessionAndItsStillsFromTheFile() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let store = try SQLiteSessionStore(directory: dir.path, key: try key())
        let marker = "erase-me-\(UUID().uuidString)"
        try store.create(newSession("e1", token: "t"))
        guard case .claimed = try store.claim(id: "e1", tokenSHA256: hash("t"), owner: "a", now: t0) else { return XCTFail("claim") }
        XCTAssertTrue(try store.finish(id: "e1", owner: "a", result: finished(#"{"name":"\#(marker)"}"#, autoshot: [1], snapshot: [2]), now: t0))
        try store.create(newSession("keep", token: "t2"))
        XCTAssertNotNil(try fileBytes(dir).range(of: Data(marker.utf8)), "the report is in the file before")
        XCTAssertEqual(try store.erase(id: "e1"), .finished)
        XCTAssertNil(try store.erase(id: "e1"))
        XCTAssertEqual(try sql(dir, "SELECT id FROM sessions"), ["keep"])
        XCTAssertEqual(try sql(dir, "SELECT count(*) FROM stills"), ["0"])
        // secure_delete and the truncated log: the erased report's bytes are gone from every file.
        XCTAssertNil(try fileBytes(dir).range(of: Data(marker.utf8)), "the erased report's text is still in the store's files")
        XCTAssertEqual(try store.erase(id: "keep"), .created)
    }

    func testStillsAreSealedAtRestAndOpenOnlyWithTheirKey() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        var generator = SystemRandomNumberGenerator()
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<30_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        do {
            let store = try SQLiteSessionStore(directory: dir.path, key: try key())
            try store.create(newSession("p", token: "t"))
            guard case .claimed = try store.claim(id: "p", tokenSHA256: hash("t"), owner: "a", now: t0) else { return XCTFail("claim") }
            XCTAssertTrue(try store.finish(id: "p", owner: "a", result: finished("{}", autoshot: jpeg, snapshot: jpeg), now: t0))
            XCTAssertEqual(try store.still(id: "p", kind: .snapshot), jpeg)
        }
        // No 64-byte stretch of the picture is in the database or its log.
        let bytes = try fileBytes(dir)
        for offset in stride(from: 0, to: jpeg.count - 64, by: 4096) {
            XCTAssertNil(bytes.range(of: Data(jpeg[offset..<offset + 64])), "bytes \(offset)… of the still are in the file in clear")
        }
        // What is stored: nonce (24) + tag (16) + the sealed header and picture.
        let lengths = try sql(dir, "SELECT kind, length(sealed) FROM stills ORDER BY kind")
        let header = "liveness-still/1\np\nautoshot\n".utf8.count
        XCTAssertEqual(lengths, ["autoshot|\(jpeg.count + 40 + header)", "snapshot|\(jpeg.count + 40 + header)"])
        // Another key does not open the store.
        XCTAssertThrowsError(try SQLiteSessionStore(directory: dir.path, key: try key(8))) { error in
            XCTAssertTrue("\(error)".contains("the store key does not open this store"), "\(error)")
        }
        // A sealed still moved to another session's row does not open as that session's.
        let store = try SQLiteSessionStore(directory: dir.path, key: try key())
        try store.create(newSession("q", token: "t"))
        _ = try python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("INSERT INTO stills (session_id, kind, sealed) SELECT 'q', 'autoshot', sealed FROM stills WHERE session_id = 'p' AND kind = 'autoshot'")
            db.commit()
            """, [dir.appendingPathComponent(SQLiteSessionStore.fileName).path])
        XCTAssertThrowsError(try store.still(id: "q", kind: .autoshot))
    }

    func testSessionsOfAGoneInstanceAreOrphansAndThoseOfALiveOneAreNot() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        let store = try SQLiteSessionStore(directory: dir.path, key: try key())
        // A process that has exited: its pid and start time name no running process.
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        dead.waitUntilExit()
        let me = InstanceRecord.current()
        var gone = InstanceRecord(id: "gone", host: me.host, pid: dead.processIdentifier, processStart: "1")
        var remote = InstanceRecord(id: "remote", host: "another-machine", pid: 1, processStart: "1")
        try store.heartbeat(me, now: t0)
        try store.heartbeat(gone, now: t0)
        try store.heartbeat(remote, now: t0)
        for (id, owner) in [("mine", me.id), ("dead", gone.id), ("far", remote.id), ("unrecorded", "nobody")] {
            try store.create(newSession(id, token: id))
            guard case .claimed = try store.claim(id: id, tokenSHA256: hash(id), owner: owner, now: t0) else { return XCTFail(id) }
        }
        let other = InstanceRecord.current()
        XCTAssertEqual(try store.orphans(except: other.id, now: t0.addingTimeInterval(5), staleAfterSeconds: 30).map(\.id).sorted(),
                       ["dead", "unrecorded"], "this process is alive; the remote instance's heartbeat is fresh")
        XCTAssertEqual(try store.orphans(except: other.id, now: t0.addingTimeInterval(60), staleAfterSeconds: 30).map(\.id).sorted(),
                       ["dead", "far", "unrecorded"], "a silent remote instance is gone")
        gone.heartbeatAt = 0
        remote.heartbeatAt = 0
        XCTAssertFalse(me.isGone(now: t0.addingTimeInterval(1e6), staleAfterSeconds: 30), "a live local process is never stale")
        // The owner alone finishes them; a finished orphan is no longer one.
        XCTAssertTrue(try store.finish(id: "dead", owner: gone.id, result: finished("{}"), now: t0))
        XCTAssertEqual(try store.orphans(except: other.id, now: t0, staleAfterSeconds: 30).map(\.id), ["unrecorded"])
    }

    func testBadFilesAndKeysGiveAClearErrorNotACrash() throws {
        let dir = try Fixtures.temporaryDirectory(self)
        // Not a database at all.
        let garbage = dir.appendingPathComponent("garbage")
        try FileManager.default.createDirectory(at: garbage, withIntermediateDirectories: true)
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: garbage.appendingPathComponent(SQLiteSessionStore.fileName))
        XCTAssertThrowsError(try SQLiteSessionStore(directory: garbage.path, key: try key())) { error in
            XCTAssertTrue("\(error)".contains("is not a SQLite database"), "\(error)")
            XCTAssertTrue("\(error)".contains("move it aside"), "\(error)")
        }
        // A real store damaged inside: its pages overwritten after the header.
        let damaged = dir.appendingPathComponent("damaged")
        do {
            let store = try SQLiteSessionStore(directory: damaged.path, key: try key())
            for i in 0..<300 { try store.create(newSession("d\(i)-\(String(repeating: "x", count: 200))", token: "t\(i)")) }
            store.close()
        }
        _ = try python("""
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA wal_checkpoint(TRUNCATE)"); db.close()
            with open(sys.argv[1], "r+b") as f:
                f.seek(4096); f.write(bytes([0x5A]) * 8192)
            """, [damaged.appendingPathComponent(SQLiteSessionStore.fileName).path])
        XCTAssertThrowsError(try SQLiteSessionStore(directory: damaged.path, key: try key())) { error in
            XCTAssertTrue("\(error)".contains("damaged") || "\(error)".contains("is not a SQLite database"), "\(error)")
        }
        // A file where the folder should be; a folder where the database should be.
        let file = dir.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        XCTAssertThrowsError(try SQLiteSessionStore(directory: file.path, key: try key())) { error in
            XCTAssertTrue("\(error)".contains("is not a folder"), "\(error)")
        }
        let folder = dir.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(SQLiteSessionStore.fileName), withIntermediateDirectories: true)
        XCTAssertThrowsError(try SQLiteSessionStore(directory: folder.path, key: try key())) { error in
            XCTAssertTrue("\(error)".contains("is not a regular file"), "\(error)")
        }
        // Key files: missing, the wrong size, readable by others; 32 bytes and 64 hex digits load.
        let keyFile = dir.appendingPathComponent("store.key").path
        XCTAssertThrowsError(try StoreKey.load(path: keyFile)) { XCTAssertTrue("\($0)".contains("no such file"), "\($0)") }
        for (content, mode, expected) in [(Data(repeating: 1, count: 16), 0o600, "holds 16 bytes; a store key is exactly 32"),
                                          (Data(repeating: 1, count: 33), 0o600, "holds 33 bytes"),
                                          (Data(repeating: 1, count: 32), 0o644, "others can access")] {
            try? FileManager.default.removeItem(atPath: keyFile)
            XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: content, attributes: [.posixPermissions: mode]))
            XCTAssertThrowsError(try StoreKey.load(path: keyFile)) { XCTAssertTrue("\($0)".contains(expected), "\($0)") }
        }
        for content in [Data(repeating: 7, count: 32), Data((String(repeating: "07", count: 32) + "\n").utf8)] {
            try? FileManager.default.removeItem(atPath: keyFile)
            XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: content, attributes: [.posixPermissions: 0o600]))
            let loaded = try StoreKey.load(path: keyFile)
            XCTAssertEqual(try key().open(loaded.seal([1, 2, 3])), [1, 2, 3], "the same key as 32 bytes or 64 hex digits")
        }
    }

    /// The database and its write-ahead log, as bytes.
    private func fileBytes(_ dir: URL) throws -> Data {
        var data = Data()
        for suffix in ["", "-wal"] {
            let url = dir.appendingPathComponent(SQLiteSessionStore.fileName + suffix)
            if FileManager.default.fileExists(atPath: url.path) { data += try Data(contentsOf: url) }
        }
        return data
    }
}

private final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func add(_ key: String) { lock.withLock { counts[key, default: 0] += 1 } }
    func count(_ key: String) -> Int { lock.withLock { counts[key] ?? 0 } }
}
