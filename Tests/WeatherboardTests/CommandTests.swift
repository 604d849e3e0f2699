import Testing
@testable import Weatherboard

@Suite struct CommandTests {
    @Test func commandNameIsWeatherboard() {
        #expect(WeatherboardCommand.configuration.commandName == "weatherboard")
    }
}
