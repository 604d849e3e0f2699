extension Optional where Wrapped == Bool {
    /// A `SELECT 1 …` answer: true only when a row said so.
    var isTrue: Bool { self ?? false }
}
