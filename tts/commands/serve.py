"""``tts serve``: load voices and vocoders once and answer HTTP requests (:mod:`tts.serve`)."""

from __future__ import annotations

import argparse

from tts import checkpoint
from tts.commands.options import add_device, device, positive_float, positive_int
from tts.errors import TTSError
from tts.serve import Limits, Service, create_app
from tts.synthesis import Synthesizer, vocoder_from_option


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="an HTTP service with a page: POST /synthesize, GET /health, GET /")
    p.add_argument("--voice", nargs="+", metavar="NAME=CHECKPOINT",
                   help="voices by name (default: the bundled model, as 'bundled')")
    p.add_argument("--vocoder", nargs="+", default=["hifigan", "griffin-lim"], metavar="VOCODER",
                   help="vocoders loaded for every voice, the first the default (default: hifigan griffin-lim)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=positive_int, default=8000)
    p.add_argument("--max-chars", type=positive_int, default=Limits.max_chars, help="characters per request")
    p.add_argument("--max-jobs", type=positive_int, default=Limits.max_jobs,
                   help="requests waiting or running at once; more are told the service is busy (503)")
    p.add_argument("--timeout", type=positive_float, default=Limits.timeout, help="seconds a synthesis may take")
    add_device(p)
    p.set_defaults(func=run)


def parse_voices(specs: list[str] | None) -> dict[str, str | None]:
    """``NAME=CHECKPOINT`` items → {name: path}; none: the bundled model."""
    if not specs:
        return {"bundled": None}
    voices: dict[str, str | None] = {}
    for spec in specs:
        name, _, path = spec.partition("=")
        if not name or not path or name in voices:
            raise TTSError(f"--voice {spec!r}: give NAME=CHECKPOINT, each name once")
        voices[name] = path
    return voices


def load_service(voices: dict[str, str | None], vocoders: list[str], device_name: str, limits: Limits) -> Service:
    """Every voice with every vocoder, loaded now (a checkpoint or vocoder that fails is the error)."""
    loaded_voices: dict[str, dict[str, Synthesizer]] = {}
    for name, path in voices.items():
        loaded = checkpoint.load(path, device_name)
        settings = loaded.config.inference
        loaded_voices[name] = {
            option: Synthesizer(loaded, device_name, settings=settings,
                                vocoder=vocoder_from_option(option, loaded.audio, device_name, settings.griffin_lim))
            for option in vocoders}
    return Service(loaded_voices, limits)


def run(args: argparse.Namespace) -> None:
    import uvicorn

    limits = Limits(max_chars=args.max_chars, max_jobs=args.max_jobs, timeout=args.timeout)
    service = load_service(parse_voices(args.voice), list(dict.fromkeys(args.vocoder)), device(args), limits)
    print(f"serving {', '.join(service.voices)} on http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(create_app(service), host=args.host, port=args.port, log_level="warning")
