"""The commands that load checkpoints and run things (evaluate, validate, plot-alignment,
report, bench); ``tts/cli.py`` parses arguments and calls them."""
