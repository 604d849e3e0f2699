import Foundation

/// A configuration or resource problem found at start-up.
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
