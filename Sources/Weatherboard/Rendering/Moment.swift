import Foundation

/// An instant shown to people in any zone: `<time datetime="{{iso}}">{{text}}</time>`, the text
/// in UTC (the server does not know the reader's zone; pages that load `local-time.js` rewrite
/// `time[data-local-time]` into the reader's own).
struct Moment {
    var iso: String
    var text: String
}

extension Moment {
    init(_ date: Date, _ language: Language) {
        self.init(iso: DateFormatting.iso8601(date), text: DateFormatting.utcMinute(date, language: language))
    }
}
