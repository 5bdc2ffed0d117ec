import CSodium

/// HMAC-SHA-256 (RFC 2104) with libsodium's `crypto_auth_hmacsha256_init/update/final`, which
/// take a key of any length as HMAC does (hashed first when longer than 64 bytes). What the
/// webhooks of `liveness serve` sign with the shared secret (docs/webhooks.md); any HMAC
/// implementation (Python's `hmac`, `openssl dgst -sha256 -hmac`) computes the same.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `parts` (concatenated, in order) under `key`.
    public static func code(key: [UInt8], _ parts: [UInt8]...) -> [UInt8] {
        _ = try? Sodium.ready()
        var state = crypto_auth_hmacsha256_state()
        let keyBytes = key.isEmpty ? [0] : key  // a pointer even for an empty key (length 0 then)
        keyBytes.withUnsafeBufferPointer { k in
            _ = crypto_auth_hmacsha256_init(&state, k.baseAddress!, key.count)
        }
        for part in parts where !part.isEmpty {
            part.withUnsafeBufferPointer { p in
                _ = crypto_auth_hmacsha256_update(&state, p.baseAddress!, UInt64(p.count))
            }
        }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_bytes()))
        _ = crypto_auth_hmacsha256_final(&state, &out)
        return out
    }
}
