import Weatherboard
WeatherboardCommand.main()
