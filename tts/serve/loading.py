"""Loading what a service answers with: every voice with every vocoder, once, at start."""

from __future__ import annotations

from tts import checkpoint
from tts.config import resolve_inference
from tts.serve.app import Compute, Limits, Service
from tts.synthesis import Synthesizer
from tts.threads import shared_cores
from tts.vocoder_loader import vocoder_for


def load_service(voices: dict[str, str | None], vocoders: list[str], device_name: str, limits: Limits,
                 precision: str = "fp32") -> Service:
    """Every voice (name → checkpoint path, None for the bundled one) with every vocoder, loaded now
    on the service's compute thread (where its batches will run: :class:`~tts.serve.app.Compute`),
    each acoustic model decoding in ``precision`` (:class:`Synthesizer`) ``limits.batch_size``
    sentences at a time: a checkpoint or vocoder that fails, or a precision this machine lacks, is
    the error."""
    # the count is applied on the compute thread as each batch starts (Compute.run), not here
    compute = Compute(shared_cores(lambda threads: None))
    loaded = compute.call(_load_voices, voices, vocoders, device_name, limits, precision)
    return Service(loaded, limits, compute)


def _load_voices(voices: dict[str, str | None], vocoders: list[str], device_name: str, limits: Limits,
                 precision: str) -> dict[str, dict[str, Synthesizer]]:
    """Voice name → vocoder name → synthesizer, as :func:`load_service` describes."""
    loaded_voices: dict[str, dict[str, Synthesizer]] = {}
    for name, path in voices.items():
        loaded = checkpoint.load(path, device_name)
        settings = resolve_inference(loaded.config.inference, {"batch_size": limits.batch_size})
        loaded_voices[name] = {
            option: Synthesizer(loaded, device_name, precision, settings=settings,
                                vocoder=vocoder_for(option, device_name, loaded.audio, settings.griffin_lim))
            for option in vocoders}
    return loaded_voices
