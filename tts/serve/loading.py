"""Loading what a service answers with: every voice with every vocoder, once, at start."""

from __future__ import annotations

from tts import checkpoint
from tts.config import resolve_inference
from tts.serve.app import Limits, Service
from tts.synthesis import Synthesizer
from tts.threads import shared_cores
from tts.vocoder_loader import vocoder_for


def load_service(voices: dict[str, str | None], vocoders: list[str], device_name: str, limits: Limits,
                 precision: str = "fp32") -> Service:
    """Every voice (name → checkpoint path, None for the bundled one) with every vocoder, loaded now,
    each acoustic model decoding in ``precision`` (:class:`Synthesizer`) ``limits.batch_size``
    sentences at a time: a checkpoint or vocoder that fails, or a precision this machine lacks, is
    the error."""
    loaded_voices: dict[str, dict[str, Synthesizer]] = {}
    for name, path in voices.items():
        loaded = checkpoint.load(path, device_name)
        settings = resolve_inference(loaded.config.inference, {"batch_size": limits.batch_size})
        loaded_voices[name] = {
            option: Synthesizer(loaded, device_name, precision, settings=settings,
                                vocoder=vocoder_for(option, device_name, loaded.audio, settings.griffin_lim))
            for option in vocoders}
    # the count is applied in each worker thread as it computes (Compute.run), not here
    return Service(loaded_voices, limits, shared_cores(lambda threads: None))
