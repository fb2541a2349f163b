"""Loading what a service answers with: every voice with every vocoder, once, at start."""

from __future__ import annotations

from tts import checkpoint
from tts.checkpoint import LoadedModel
from tts.config import InferenceConfig, resolve_inference
from tts.onnx import OnnxExport, is_onnx_export, load_onnx
from tts.serve.app import Compute, Limits, Service
from tts.synthesis import Synthesizer
from tts.threads import shared_cores
from tts.vocoder_loader import vocoder_for
from tts.vocoders import Vocoder


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
    """Voice name → vocoder name → synthesizer, as :func:`load_service` describes. A voice's path
    may name an ONNX export's folder (``tts export --format onnx``): it runs on onnxruntime, with
    its own exported vocoder where one of ``vocoders`` names it."""
    loaded_voices: dict[str, dict[str, Synthesizer]] = {}
    for name, path in voices.items():
        loaded = load_onnx(path) if path is not None and is_onnx_export(path) else checkpoint.load(path, device_name)
        settings = resolve_inference(loaded.config.inference, {"batch_size": limits.batch_size})
        loaded_voices[name] = {
            option: Synthesizer(loaded, device_name, precision, settings=settings,
                                vocoder=_vocoder(loaded, option, device_name, settings))
            for option in vocoders}
    return loaded_voices


def _vocoder(loaded: LoadedModel | OnnxExport, option: str, device_name: str, settings: InferenceConfig) -> Vocoder:
    """The vocoder ``option`` for ``loaded``: an export's own graph where it exported that one."""
    exported = loaded.vocoder_named(option) if isinstance(loaded, OnnxExport) else None
    return exported or vocoder_for(option, device_name, loaded.config.audio, settings.griffin_lim)
