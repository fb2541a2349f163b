"""tts.errors.brief: a library's exception as the end of one error line."""

from tts.errors import brief


def test_brief_keeps_a_short_first_line_whole():
    assert brief(RuntimeError("failed finding central directory\nat frame 2")) == "failed finding central directory"


def test_brief_cuts_a_long_line_after_a_whole_word():
    text = brief(RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory. "
                              "This is an internal miniz error. If you see this, report it"), limit=60)
    assert text == "PytorchStreamReader failed reading zip archive: failed..." and len(text) <= 63


def test_brief_names_the_type_of_an_exception_that_says_nothing():
    assert brief(EOFError()) == "EOFError" and brief(ValueError("  \n ")) == "ValueError"
