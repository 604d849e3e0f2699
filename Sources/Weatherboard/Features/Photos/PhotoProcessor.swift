import CPhotos
import Crypto
import Foundation
import Synchronization

/// A photo as the site keeps it: written anew from the upload's pixels, with nothing else of it.
struct ProcessedPhoto: Sendable {
    /// The first 32 hex digits of the SHA-256 of the large WebP: its address (`/photos/{hash}.webp`).
    var hash: String
    var largeWebP: [UInt8]
    var smallWebP: [UInt8]
    var jpeg: [UInt8]
    var width: Int
    var height: Int
    var smallWidth: Int
    /// What it looks like, in 64 bits (`PhotoLikeness`).
    var differenceHash: UInt64

    var bytes: Int { largeWebP.count + smallWebP.count + jpeg.count }
}

/// Turns uploads into `ProcessedPhoto`s with libvips, off the request workers: a few decoder
/// threads of its own, a short queue in front of them (a full one answers 503 at once), and a
/// deadline on each decode. The limits are checked on the header before a pixel is decoded.
final class PhotoProcessor: Sendable {
    struct Limits: Sendable {
        /// Largest upload.
        var maxBytes = 12 << 20
        /// Most pixels by the header (width × height).
        var maxPixels = 40_000_000
        /// Longest side by the header: a 40-megapixel limit still allows a 1 × 40,000,000 strip.
        var maxSide = 16_384
        /// Decodes at once, and uploads waiting for one.
        var decoders = 1
        var queue = 4
        /// How long one decode may take.
        var deadline: TimeInterval = 15
    }

    /// The sizes written: a WebP and a JPEG fitting `large` × `large`, a WebP `small` wide (a phone's column).
    static let large = 1600
    static let small = 480
    static let quality: Int32 = 80

    let limits: Limits
    private let work: OperationQueue
    private let waiting = Atomic<Int>(0)
    /// Uploads handed to a decoder.
    let decodes = Atomic<Int>(0)

    /// libvips is started once for the process.
    private static let started: Bool = wb_photos_start() == 0

    init(limits: Limits = Limits()) {
        self.limits = limits
        work = OperationQueue()
        work.name = "photo-decoders"
        work.maxConcurrentOperationCount = max(1, limits.decoders)
    }

    /// Members with an upload being decoded: one each at a time (40 at once by one member once
    /// took 23 s of CPU and 400 MB).
    private let decodingFor = Mutex<Set<Int64>>([])

    /// The upload as the site will keep it, or why not. Blocks the calling worker until a decoder
    /// has done, and no longer than the queue's wait plus the deadline. `owner`'s second upload
    /// while one is decoded is refused at once.
    func process(_ upload: ArraySlice<UInt8>, for owner: Int64? = nil) -> Result<ProcessedPhoto, PhotoRefusal> {
        guard upload.count <= limits.maxBytes else { return .failure(.tooLarge) }
        if let owner {
            guard decodingFor.withLock({ $0.insert(owner).inserted }) else { return .failure(.oneAtATime) }
        }
        defer { if let owner { decodingFor.withLock { _ = $0.remove(owner) } } }
        let format: PhotoFormat
        switch PhotoFormat.recognise(upload) {
        case .success(let recognised): format = recognised
        case .failure(let problem): return .failure(PhotoRefusal(problem))
        }
        guard Self.started else { return .failure(.busy) }
        let admitted = waiting.wrappingAdd(1, ordering: .relaxed).newValue
        defer { waiting.wrappingSubtract(1, ordering: .relaxed) }
        guard admitted <= limits.decoders + limits.queue else { return .failure(.busy) }

        let result = Mutex<Result<ProcessedPhoto, PhotoRefusal>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let limits = self.limits
        decodes.add(1, ordering: .relaxed)
        work.addOperation {
            result.withLock { $0 = Self.decode(upload, format: format, limits: limits) }
            done.signal()
        }
        // The decode stops itself at its deadline; the queue's wait comes on top.
        if done.wait(timeout: .now() + limits.deadline * Double(limits.queue + 1) + 1) == .timedOut {
            return .failure(.busy)
        }
        return result.withLock { $0 } ?? .failure(.busy)
    }

    private static func decode(_ upload: ArraySlice<UInt8>, format: PhotoFormat, limits: Limits) -> Result<ProcessedPhoto, PhotoRefusal> {
        upload.withUnsafeBytes { raw -> Result<ProcessedPhoto, PhotoRefusal> in
            var header = wb_photo_header()
            guard wb_photo_read_header(raw.baseAddress, raw.count, format.rawValue, &header) == 0 else { return .failure(.damaged) }
            guard header.width > 0, header.height > 0 else { return .failure(.damaged) }
            guard Int(header.width) <= limits.maxSide, Int(header.height) <= limits.maxSide,
                  Int(header.width) * Int(header.height) <= limits.maxPixels else { return .failure(.tooManyPixels) }
            var output = wb_photo_output()
            let status = wb_photo_render(raw.baseAddress, raw.count, format.rawValue, Int32(large), Int32(small), quality,
                                         limits.deadline, &output)
            defer { wb_photo_free(&output) }
            guard status == 0 else {
                return .failure(String(cString: wb_photo_error()).contains("timeout") ? .tooSlow : .damaged)
            }
            func bytes(_ buffer: wb_photo_bytes) -> [UInt8] {
                Array(UnsafeRawBufferPointer(start: buffer.data, count: buffer.length))
            }
            let largeWebP = WebPMetadata.stripped(bytes(output.large_webp))
            let digest = SHA256.hash(data: largeWebP)
            return .success(ProcessedPhoto(
                hash: String(digest.map { String(format: "%02x", $0) }.joined().prefix(32)),
                largeWebP: largeWebP, smallWebP: WebPMetadata.stripped(bytes(output.small_webp)), jpeg: bytes(output.jpeg),
                width: Int(output.width), height: Int(output.height), smallWidth: Int(output.small_width),
                differenceHash: output.difference_hash))
        }
    }
}

/// Whether two pictures are the same picture: the Hamming distance of their 64-bit difference
/// hashes (a 9 × 8 grey thumbnail, each bit whether a pixel is brighter than its right neighbour).
/// A re-encode at another quality moves a bit or two; a 5 % crop a handful; another photo about
/// half of them.
enum PhotoLikeness {
    /// At most this many bits apart: the same picture.
    static let sameWithin = 10

    static func distance(_ a: UInt64, _ b: UInt64) -> Int { (a ^ b).nonzeroBitCount }
}
