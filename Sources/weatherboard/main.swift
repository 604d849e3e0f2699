import HTTPServer
import Weatherboard

// One line per event, as it happens, even when standard output is a file or a pipe (a
// supervisor's log): C's default would hold lines in a buffer until exit.
StandardOutput.flushEveryLine()
WeatherboardCommand.main()
