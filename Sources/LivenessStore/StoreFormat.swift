import Foundation

/// What every backend stores the same way: the row of a session as `StoredSession`, the header
/// sealed with each still, the key check, token hash comparison.
enum StoreFormat {
    /// A session from the columns `id, state, policy, seed, created_at, expires_at, owner,
    /// finished_at, status, reason, report, signature, prompt_log, prompted, stills` (the stills'
    /// kinds joined by commas), then optionally `delivery_state, delivery_attempts`; nil when the
    /// state is not one of the three.
    static func session(from row: [SQLValue], id: String) -> StoredSession? {
        guard row.count >= 15, let state = row[1].text.flatMap(SessionState.init(rawValue:)) else { return nil }
        return StoredSession(
            id: row[0].text ?? id, state: state, policy: row[2].blob ?? [], seed: UInt64(bitPattern: row[3].integer ?? 0),
            createdAt: Date(timeIntervalSince1970: row[4].real ?? 0), expiresAt: Date(timeIntervalSince1970: row[5].real ?? 0),
            owner: row[6].text, finishedAt: row[7].real.map(Date.init(timeIntervalSince1970:)), status: row[8].text, reason: row[9].text,
            report: row[10].blob, signature: row[11].blob, promptLog: row[12].blob, prompted: (row[13].integer ?? 0) != 0,
            stills: Set((row[14].text ?? "").split(separator: ",").compactMap { StillKind(rawValue: String($0)) }),
            delivery: row.count >= 17 ? row[15].text.flatMap(DeliveryState.init(rawValue:))
                .map { DeliverySummary(state: $0, attempts: Int(row[16].integer ?? 0)) } : nil)
    }

    /// What a sealed still starts with, inside the seal: the format, the session and the kind. A
    /// sealed still copied into another row does not open as that row's.
    static func stillHeader(_ id: String, _ kind: StillKind) -> [UInt8] {
        Array("liveness-still/1\n\(id)\n\(kind.rawValue)\n".utf8)
    }

    /// The constant sealed in the store's metadata: a restart with another key fails at start.
    static let keyCheck = Array("liveness-store/1 key check".utf8)

    /// Constant-time equality (hashes of tokens).
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
