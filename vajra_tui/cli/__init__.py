"""The command line: parsing, the headless subcommands and what they print. Not imported by the engine."""
