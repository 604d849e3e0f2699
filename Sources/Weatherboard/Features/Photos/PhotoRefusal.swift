import HTTPServer

/// Why an upload was refused; each is said to the person in words (`error_photo_…`).
enum PhotoRefusal: String, Error, Sendable {
    /// Not JPEG, PNG, WebP or HEIC, whatever its name says.
    case notAPhoto = "not_a_photo"
    /// Cut short or corrupt.
    case damaged
    /// Something else rides after the picture (a polyglot).
    case moreThanAPhoto = "more_than_a_photo"
    /// Over the upload limit in bytes.
    case tooLarge = "too_large"
    /// Over the pixel limit, by its header.
    case tooManyPixels = "too_many_pixels"
    /// Decoding took longer than allowed.
    case tooSlow = "too_slow"
    /// Every decoder is busy and the queue is full: try again shortly (503).
    case busy
    /// Like a photo a moderator removed.
    case removedBefore = "removed_before"
    /// The member's photos for today, or their bytes, or the site's budget.
    case dailyLimit = "daily_limit"
    case memberBytes = "member_bytes"
    case siteBudget = "site_budget"
    /// Another of the member's uploads is being decoded: one at a time (429).
    case oneAtATime = "one_at_a_time"
    /// The member's decodes for the day, refused ones included, are spent (429).
    case tooManyTries = "too_many_tries"

    var key: String { "error_photo_\(rawValue)" }

    init(_ problem: PhotoFormat.Problem) {
        switch problem {
        case .notAPhoto: self = .notAPhoto
        case .damaged: self = .damaged
        case .moreThanAPhoto: self = .moreThanAPhoto
        }
    }

    var status: HTTPStatus {
        switch self {
        case .notAPhoto: .unsupportedMediaType
        case .tooLarge, .tooManyPixels, .memberBytes: .contentTooLarge
        case .busy: .serviceUnavailable
        case .dailyLimit, .oneAtATime, .tooManyTries: .tooManyRequests
        case .siteBudget: .insufficientStorage
        case .damaged, .moreThanAPhoto, .tooSlow, .removedBefore: .unprocessableContent
        }
    }

}
