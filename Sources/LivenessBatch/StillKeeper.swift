import LivenessKit
import FaceTracking
import LivenessCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes a session's autoshot and snapshot (kept by its `FrameProcessor`) as JPEGs
/// (permissions 0600: biometric data) only when the verdict releases them (`passed`).
struct StillKeeper {
    var autoshot: Image?
    var snapshot: Image?

    /// Writes the stills into `folder` when `passed`; returns their paths (nil when not written).
    /// When not passed, removes stills an earlier run of the same input left there: a folder never
    /// holds stills its report does not release.
    func release(passed: Bool, folder: String, quality: Int = 92) throws(InputError) -> (autoshot: String?, snapshot: String?) {
        guard passed else {
            unlink(folder + "/autoshot.jpg")
            unlink(folder + "/snapshot.jpg")
            return (nil, nil)
        }
        func write(_ image: Image?, _ name: String) throws(InputError) -> String? {
            guard let image else { return nil }
            let path = folder + "/" + name
            let jpeg: [UInt8]
            do {
                jpeg = try image.jpegData(quality: quality)
            } catch {
                throw InputError(path: path, error)
            }
            try AtomicFile.write(jpeg, to: path, mode: 0o600)
            return path
        }
        return (try write(autoshot, "autoshot.jpg"), try write(snapshot, "snapshot.jpg"))
    }
}
