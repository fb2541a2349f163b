"""``tts export``: a checkpoint (or the average of several of one model) for release — stripped
(``.pt``) or as ONNX graphs with their vocoder (``--format onnx``, its decoder step in int8 with
``--int8``; run by ``tts synthesize --engine onnx``)."""

from __future__ import annotations

import argparse

from tts.commands.options import add_vocoder, inference_settings
from tts.errors import TTSError


def declare(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="CHECKPOINT|inference.KEY=VALUE",
                   help="a checkpoint (several of one model, e.g. a run's last few: their weights are averaged; "
                        "repeat one to weight it), then "
                        "the inference settings the release is stored with, e.g. inference.attention_window=[1,2]")
    p.add_argument("--out", required=True, help="the release file (.pt), or the folder of an ONNX export")
    p.add_argument("--format", choices=["pt", "onnx"], default="pt",
                   help="onnx: encoder, decoder step, postnet and the neural vocoder as ONNX graphs (float32; "
                        "--int8: the step's weights in uint8)")
    p.add_argument("--fp32", action="store_true", help="pt: keep float32 weights")
    p.add_argument("--int8", action="store_true",
                   help="onnx: the decoder step's weights as uint8, one scale per column (4x smaller; faster at batch 1)")
    add_vocoder(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    checkpoints = [item for item in args.inputs if "=" not in item]
    changes = inference_settings([item for item in args.inputs if "=" in item])
    if not checkpoints:
        raise TTSError("give the checkpoint to export (before its inference.KEY=VALUE settings)")
    if args.vocoder:
        changes["vocoder"] = args.vocoder
    if args.int8 and args.format != "onnx":
        raise TTSError("--int8 quantizes an ONNX export's decoder step: add --format onnx (a .pt decodes in int8 "
                       "with 'tts synthesize --int8')")
    if args.format == "onnx" and len(checkpoints) > 1:
        raise TTSError("--format onnx exports one checkpoint: average into a .pt first, then export that")
    if args.format == "pt":
        from tts import checkpoint

        out = checkpoint.export(checkpoints, args.out, half=not args.fp32, inference=changes)
        print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
        return
    from tts.onnx import export_checkpoint

    out = export_checkpoint(checkpoints[0], args.out, changes, int8=args.int8)
    size = sum(f.stat().st_size for f in out.iterdir()) / 1e6
    print(f"wrote {out}/ ({size:.1f} MB): tts synthesize --engine onnx --checkpoint {out} --text ...")
