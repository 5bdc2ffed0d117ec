import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP request/response on the event loop: its request, the body as it arrives (in memory,
/// or for an upload in a private temporary file), and the response once known.
final class HTTPExchange {
    let id: UInt64
    let wsi: OpaquePointer
    var request: HTTPRequest
    /// Largest body accepted, bytes.
    var limit = 64 * 1024
    private(set) var received = 0
    var response: HTTPResponse?
    var responded = false
    var waitingForAnalysis = false
    private var uploadDirectory: String?
    private var uploadDescriptor: Int32 = -1

    init(id: UInt64, wsi: OpaquePointer, request: HTTPRequest) {
        self.id = id
        self.wsi = wsi
        self.request = request
    }

    /// Stores the body in a new private folder (mode 0700, file 0600): uploads are biometric data.
    func openUpload() throws(ServiceError) {
        var template = Array((FileManager.default.temporaryDirectory.path + "/liveness-upload-XXXXXX").utf8CString)
        guard let folder = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw ServiceError("cannot create a folder for the upload: \(String(cString: strerror(errno)))")
        }
        uploadDirectory = String(cString: folder)
        uploadDescriptor = open(uploadDirectory! + "/upload.video", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard uploadDescriptor >= 0 else { throw ServiceError("cannot store the upload: \(String(cString: strerror(errno)))") }
    }

    /// Appends body bytes.
    func append(_ bytes: UnsafeRawBufferPointer) throws(ServiceError) {
        received += bytes.count
        if uploadDescriptor >= 0 {
            var offset = 0
            while offset < bytes.count {
                let n = write(uploadDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ServiceError("cannot store the upload: \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        } else {
            request.body.append(contentsOf: bytes)
        }
    }

    /// Closes the upload file; returns its path.
    func finishUpload() -> String? {
        guard uploadDescriptor >= 0, let folder = uploadDirectory else { return nil }
        close(uploadDescriptor)
        uploadDescriptor = -1
        return folder + "/upload.video"
    }

    /// Removes the upload, if any (after its analysis, or when the client went away).
    func discard() {
        if uploadDescriptor >= 0 { close(uploadDescriptor) }
        uploadDescriptor = -1
        if let folder = uploadDirectory, !waitingForAnalysis {
            try? FileManager.default.removeItem(atPath: folder)
            uploadDirectory = nil
        }
    }
}
