"""``tts serve``: load voices and vocoders once and answer HTTP requests (:mod:`tts.serve`)."""

from __future__ import annotations

import argparse

from tts.commands.options import add_device, add_precision, checked, device, positive_float, positive_int, precision
from tts.errors import TTSError

#: a TCP port
port_number = checked(int, lambda n: 1 <= n <= 65535, "a port from 1 to 65535")


def declare(p: argparse.ArgumentParser) -> None:
    from tts.vocoders.catalogue import SERVED, help_text

    p.add_argument("--voice", nargs="+", metavar="NAME=CHECKPOINT",
                   help="voices by name: a checkpoint, or the folder of 'tts export --format onnx' (run on "
                        "onnxruntime; default: the bundled model, as 'bundled')")
    p.add_argument("--vocoder", nargs="+", default=list(SERVED), metavar="VOCODER",
                   help=f"vocoders loaded for every voice, the first the default ({help_text()}; "
                        f"default: {' '.join(SERVED)})")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=port_number, default=8000)
    p.add_argument("--max-chars", type=positive_int, help="characters per request (default 2000)")
    p.add_argument("--max-jobs", type=positive_int,
                   help="requests waiting or running at once; more are told the service is busy (503; default 16)")
    p.add_argument("--timeout", type=positive_float, help="seconds a synthesis may take (default 120)")
    p.add_argument("--batch-size", type=positive_int,
                   help="sentences decoded together (the voices' inference.batch_size; default 64)")
    add_device(p)
    add_precision(p)
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


def run(args: argparse.Namespace) -> None:
    """Bind the port, load every voice, then announce and serve: a start-up failure is one error
    line before anything claims to serve."""
    import uvicorn

    from tts.serve import Limits, create_app, load_service
    from tts.serve.listening import listening_socket

    given = {"max_chars": args.max_chars, "max_jobs": args.max_jobs, "timeout": args.timeout,
             "batch_size": args.batch_size}
    limits = Limits(**{key: value for key, value in given.items() if value is not None})
    voices = parse_voices(args.voice)
    sock = listening_socket(args.host, args.port)
    try:
        service = load_service(voices, list(dict.fromkeys(args.vocoder)), device(args), limits, precision(args))
        print(f"serving {', '.join(service.voices)} on http://{args.host}:{args.port}/", flush=True)
        server = uvicorn.Server(uvicorn.Config(create_app(service), log_level="warning"))
        server.run(sockets=[sock])
    finally:
        sock.close()
