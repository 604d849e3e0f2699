import ArgumentParser

/// The `weatherboard` command line.
public struct WeatherboardCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(commandName: "weatherboard", abstract: "Weatherboard: today's weather, compared, and each city's board.")
    public init() {}
}
