import HTTPServer
import Weatherboard

// One line per event, as it happens, even when standard output is a file or a pipe (a
// supervisor's log): C's default would hold lines in a buffer until exit.
StandardOutput.flushEveryLine()
// Before any thread starts: memory freed by one thread is then reused by the others.
ProcessHeap.limitArenas(to: 2)
WeatherboardCommand.main()
