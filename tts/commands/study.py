"""``tts study``: one model per variant (e.g. per attention mechanism), trained alike, and one
table (:mod:`tts.evaluation.study`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tts.commands.options import add_device, device, positive_int, probability
from tts.errors import TTSError


def declare(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", required=True)
    p.add_argument("--data", required=True, help="corpus root")
    p.add_argument("--out", required=True, help="study folder (one experiment per variant, study.json, study.md)")
    p.add_argument("--steps", type=positive_int, required=True, help="training steps of every variant")
    p.add_argument("--kinds", nargs="+", help="one variant per attention mechanism")
    p.add_argument("--variant", nargs="+", help="NAME[:key=value,key=value] (config overrides)")
    p.add_argument("--seeds", nargs="+", type=positive_int, metavar="SEED",
                   help="each variant once per seed (NAME-sSEED, train.seed=SEED)")
    p.add_argument("--eval-limit", type=positive_int, default=100, help="test utterances evaluated at the end")
    p.add_argument("--curve-every", type=positive_int, default=500, help="updates between learning-curve points")
    p.add_argument("--curve-limit", type=positive_int, default=24,
                   help="test utterances (the first N) evaluated at every curve point")
    p.add_argument("--aligned-accuracy", type=probability, metavar="SHARE",
                   help="aligned: the first validation whose attention peak tracks the token being said (±1, after "
                        "each utterance's steady lead or lag) at this share of steps (needs a corpus with phone "
                        "timings; the second edition uses 0.9; default: diagonality and focus)")
    p.add_argument("--evaluate", choices=["last", "best"], default="last",
                   help="the checkpoint measured at the end: the last, or the best validation loss's")
    p.add_argument("--long-form", action="store_true",
                   help="long-form robustness of the measured checkpoint: ten passages at 1, 2, 4 and 8x the longest "
                        "training utterance, each said in one go (added to finished variants that lack it)")
    p.add_argument("--no-suite", action="store_true", help="skip the robustness suite")
    p.add_argument("--no-asr", action="store_true")
    p.add_argument("--no-mos", action="store_true")
    p.add_argument("--report-only", action="store_true",
                   help="train nothing: write the report of the variants finished so far")
    add_device(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from tts.config import load_config
    from tts.evaluation.study import (
        ALIGNMENT_SENTENCE,
        StudyPlan,
        Variant,
        attention_variants,
        record_missing_alignments,
        run_study,
        with_seeds,
    )
    from tts.evaluation.study_report import write_report
    from tts.fileio import writable_folder

    writable_folder(args.out)
    if args.report_only:
        record_missing_alignments(Path(args.out), Path(args.data), args.evaluate, args.steps, device(args))
        result = write_report(Path(args.out), args.config, args.data, args.steps, ALIGNMENT_SENTENCE)
        print(Path(args.out, "study.md").read_text())
        print(f"{len(result['rows'])} finished variants: {args.out}/study.json")
        return
    if (args.kinds is None) == (args.variant is None):
        raise TTSError("give the variants to compare: --kinds K1 K2 ... or --variant NAME[:key=value,...] ...")
    variants = ([Variant.parse(v) for v in args.variant] if args.variant
                else attention_variants(args.kinds, load_config(args.config).model.name))
    if args.seeds:
        variants = with_seeds(variants, args.seeds)
    plan = StudyPlan(args.steps, args.curve_every, args.curve_limit, args.eval_limit, not args.no_suite,
                     not args.no_asr, not args.no_mos, args.aligned_accuracy, args.evaluate, args.long_form)
    result = run_study(args.config, args.data, args.out, variants, plan, device(args))
    print(Path(args.out, "study.md").read_text())
    print(f"{len(result['rows'])} variants: {args.out}/study.json")
