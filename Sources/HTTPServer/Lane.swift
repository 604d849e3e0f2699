/// Which of the server's worker pools runs a request. The application sorts requests with the
/// server's `lane` function: `quick` for those that wait on nothing shared for long (static
/// files, pages kept in memory), so that a dependency that stops answering cannot occupy every
/// worker and stop them too; `main` for the rest.
public enum Lane: String, Sendable {
    case main, quick

    /// The lane of the request this thread runs (`main` outside any request).
    @TaskLocal public static var current: Lane = .main
}
