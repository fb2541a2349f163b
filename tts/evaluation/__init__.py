"""The evaluation library, one floor below the commands: scoring against a reference voice
(:mod:`~tts.evaluation.scoring`), held-out splits (:mod:`~tts.evaluation.held_out`), the
robustness suite (:mod:`~tts.evaluation.robustness`), the attention study and its report
(:mod:`~tts.evaluation.study`, :mod:`~tts.evaluation.study_report`), alignment figures, the
trainer's figures for any checkpoint (:mod:`~tts.evaluation.validate`), experiment reports and
timing. Commands, recipes, egs and tests call it; nothing here parses command-line arguments.
Import the modules themselves: this package imports nothing, so the command line stays light."""
