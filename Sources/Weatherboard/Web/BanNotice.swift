import Foundation

extension Ban {
    /// What the banned person reads, in their language: the end as an instant their browser
    /// shows in their own zone ("until 29 Nov 2026 14:45 GMT+9"), UTC without script.
    func notice(_ pages: Pages, _ language: Language) -> BanNotice {
        guard let until else {
            return BanNotice(before: pages.string("ban_permanent", language, ["reason": reason]), until: nil, after: "")
        }
        let (before, after) = pages.split("ban_until", language, around: "until", ["reason": reason])
        return BanNotice(before: before, until: Moment(until, language), after: after)
    }
}

/// A ban's explanation as a page shows it (`ban_notice.mustache`).
struct BanNotice {
    var before: String
    var until: Moment?
    var after: String
}
