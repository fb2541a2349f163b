"""``tts plot-alignment``: the alignment of a checkpoint on a validation utterance
(teacher-forced) or on free text (inference), for one or several checkpoints side by side."""

from __future__ import annotations

import argparse

from tts.commands.options import add_inference, device, inference_changes, int_pair, precision


def declare(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", nargs="+", required=True, help="one or more checkpoints (side by side)")
    p.add_argument("--text", help="free text (inference)")
    p.add_argument("--utterance", help="a validation utterance id (teacher-forced; needs --data)")
    p.add_argument("--data", help="corpus root with features")
    p.add_argument("--out", required=True, help="PNG file")
    p.add_argument("--speaker", help="who says --text, for a model of several speakers")
    p.add_argument("--head", type=int_pair, metavar="LAYER,HEAD", help="a Transformer-TTS encoder-decoder attention")
    p.add_argument("--all-heads", action="store_true", help="grid of every layer and head (Transformer-TTS)")
    add_inference(p, batch_size=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts.evaluation.alignment_figures import plot_alignments

    out = plot_alignments(args.checkpoint, args.out, text=args.text, data_root=args.data, utterance=args.utterance,
                          device=device(args), precision=precision(args), head=args.head, all_heads=args.all_heads,
                          changes=inference_changes(args), speaker=args.speaker)
    print(f"wrote {out}")
