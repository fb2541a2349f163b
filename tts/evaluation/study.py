"""``tts study``: train one model per variant of a config with the same data, seed and number of
steps, then measure each the same way, in one table.

A variant is a name and config overrides; ``--kinds`` makes one per attention mechanism. For each:
features, training (resumable: an interrupted study continues with the variant and the step it
stopped at), ``tts evaluate`` on the test split and, optionally, the robustness suite. The study
folder remembers its config, corpus and steps and refuses to continue with others.

Per variant: the devices that trained it, steps and training minutes to alignment (the first
validation whose teacher-forced diagonal correlation reaches 0.9 with a focus rate of at least 0.5,
as ``tts bench attention`` counts them), validation loss, test WER/CER, attention failures,
first-token skips, and CER on the suite's long unsplit sentences at 1×, 2× and 3× the longest
training utterance. Beside each result file: one sentence's free-running alignment and, on a corpus
with phone timings, one validation utterance's teacher-forced alignment with the token really being
said at each step (:func:`record_true_alignment`)."""

from __future__ import annotations

import fcntl
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tts import checkpoint
from tts.config import load_config
from tts.data import FeatureDataset, compute_features, feature_dir, require_corpus
from tts.data.token_timings import TrueIntervals
from tts.errors import TTSError
from tts.evaluation.alignment_figures import free_running, teacher_forced
from tts.evaluation.held_out import evaluate
from tts.evaluation.long_form import run_long_form
from tts.evaluation.report import read_metrics
from tts.evaluation.robustness import run_suite
from tts.evaluation.study_report import alignment_file, alignment_text, true_alignment_file, write_report
from tts.evaluation.timing import decoder_step_ms
from tts.fileio import atomic_path, write_text_atomic
from tts.metrics.asr import normalize_for_scoring
from tts.synthesis import Synthesizer
from tts.text import Tokenizer
from tts.training.experiment import ExperimentFolder, code_version
from tts.training.trainer import Trainer

ALIGNED_DIAGONAL, ALIGNED_FOCUS = 0.9, 0.5
#: what a result file records of the study that made it (a copy counts only for the same study)
RECORDED = ("config", "corpus", "steps", "aligned_accuracy", "evaluate")
#: what result files written before a key was recorded were made with
PROTOCOL_BEFORE = {"aligned_accuracy": None, "evaluate": "last"}


#: the suite's categories the study reads (the 100 held-out everyday sentences are for judging voices)
STUDY_SUITE = ["one_word", "short_phrase", "everyday", "numbers", "tongue_twisters", "long"]
#: the suite's long sentences at each length the study reads: the first, as every study so far
#: (its long-form measure, ``--long-form``, reads ten passages at 1, 2, 4 and 8x)
STUDY_LONG_PASSAGES = 1


#: the sentence (not in the corpus) whose free-running alignment the report shows for every variant
ALIGNMENT_SENTENCE = "The kettle whistled while she read the morning paper."


@dataclass
class Variant:
    """One row of a study: a name and the config overrides that make it."""

    name: str
    overrides: list[str]

    @classmethod
    def parse(cls, spec: str) -> "Variant":
        """``NAME:key=value,key=value`` (``NAME`` alone: the config as it is)."""
        name, _, overrides = spec.partition(":")
        if not name or not name.replace("_", "").replace("-", "").isalnum():
            raise TTSError(f"--variant {spec!r}: give NAME or NAME:key=value,key=value (NAME of letters, digits, _ -)")
        return cls(name, [o for o in overrides.split(",") if o])


@dataclass
class StudyPlan:
    """What every variant gets: ``steps`` updates, a curve point every ``curve_every`` (on the first
    ``curve_limit`` test sentences), the full test split's first ``eval_limit`` at the end (of the
    ``evaluate`` checkpoint), and the suite and the meters as asked; what counts as aligned."""

    steps: int
    curve_every: int = 500
    curve_limit: int = 24
    eval_limit: int = 100
    suite: bool = True
    use_asr: bool = True
    use_mos: bool = True
    #: "aligned" from the truth: the first validation whose attention peak is on the token being
    #: said at this share of the steps (None: the first edition's diagonality and focus)
    aligned_accuracy: float | None = None
    #: the checkpoint measured at the end: the last, or the one with the best validation loss
    evaluate: str = "last"
    #: long-form robustness of that checkpoint (:mod:`tts.evaluation.long_form`: passages at 1, 2,
    #: 4 and 8x the longest training utterance, ten each), added to finished rows that lack it
    long_form: bool = False


def attention_variants(kinds: list[str], model: str) -> list[Variant]:
    return [Variant(kind, [f"model.{model}.attention.kind={kind}"]) for kind in kinds]


def with_seeds(variants: list[Variant], seeds: list[int]) -> list[Variant]:
    """Each variant once per seed, named ``<name>-s<seed>`` (``train.seed`` set), seeds inside
    variants so that a mechanism's seeds can train on different days and machines."""
    if len(set(seeds)) != len(seeds):
        raise TTSError(f"--seeds {' '.join(map(str, seeds))}: give each seed once")
    return [Variant(f"{v.name}-s{seed}", [*v.overrides, f"train.seed={seed}"]) for v in variants for seed in seeds]


def throughput(exp: Path, frames_per_utterance: float) -> dict:
    """A run's training speed from its logs: mel frames per second over its logged windows (the
    first window's warm-up left out), utterances per lane-hour (one lane: one CPU thread), the CPU
    instruction sets of its sessions."""
    metrics = read_metrics(exp / "metrics.jsonl")
    windows = [r["frames_per_s"] for r in metrics if "frames_per_s" in r][1:]
    sessions = ExperimentFolder(exp).read_sessions()
    threads = max((int(s["device"].rsplit(", ", 1)[-1].split()[0]) for s in sessions
                   if s.get("device", "").startswith("cpu (") and "thread" in s["device"]), default=1)
    fps = sum(windows) / len(windows) if windows else 0.0
    return {"frames_per_second": round(fps, 1), "threads": threads,
            "utterances_per_lane_hour": round(fps * 3600 / frames_per_utterance / threads),
            "cpu_instructions": sorted({" ".join(s.get("cpu_instructions", ["(not recorded)"])) for s in sessions})}


def _identity(config_path: Path, data_root: Path, plan: StudyPlan, variants: list[Variant]) -> dict:
    return {"config": hashlib.sha1(config_path.read_bytes()).hexdigest()[:12], "config_path": str(config_path),
            "data": str(data_root.resolve()), "corpus": corpus_fingerprint(data_root), "steps": plan.steps,
            "curve_every": plan.curve_every, "aligned_accuracy": plan.aligned_accuracy, "evaluate": plan.evaluate,
            "variants": {v.name: v.overrides for v in variants}}


def _claim(out: Path, identity: dict) -> None:
    """Start a study folder, or continue one made with the same config, corpus, steps and variants.
    Lanes started together claim one folder: each reads and rewrites its record under an exclusive
    lock on ``.study_settings.lock``, so none reads a half-written record or drops another's variants."""
    out.mkdir(parents=True, exist_ok=True)
    record = out / "study_settings.json"
    with open(out / ".study_settings.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.is_file():
            before = {**PROTOCOL_BEFORE, **json.loads(record.read_text())}  # a folder from before they were recorded
            differing = [k for k in ("config", "data", "corpus", "steps", "curve_every", "aligned_accuracy",
                                     "evaluate") if before.get(k) != identity[k]]
            changed = [name for name, overrides in identity["variants"].items()
                       if name in before.get("variants", {}) and before["variants"][name] != overrides]
            if differing or changed:
                what = ", ".join(differing + [f"variant {n}" for n in changed])
                raise TTSError(f"{out} holds a study with another {what}: continue it with the same arguments and "
                               f"corpus, or start a new --out (its finished results stay where they are)")
            identity = {**identity, "variants": {**before["variants"], **identity["variants"]}}
        write_text_atomic(record, json.dumps(identity, indent=1))


def alignment_point(metrics: list[dict], accuracy: float | None = None) -> dict:
    """Step and training minutes of the first validation that counts as aligned (None: never):
    with ``accuracy``, the attention peak tracking the token being said (±1 token, after the
    utterance's steady lead or lag) at that share of the steps (``true_tracking_accuracy``, a
    corpus with phone timings); else diagonality and focus."""
    for record in metrics:
        if record.get("split") != "val":
            continue
        if accuracy is not None:
            aligned = record.get("true_tracking_accuracy", -1.0) >= accuracy
        else:
            aligned = record.get("attention_diagonal", -1) >= ALIGNED_DIAGONAL \
                and record.get("attention_focus", 0) >= ALIGNED_FOCUS
        if aligned:
            return {"step": record["step"], "minutes": round(record.get("train_seconds", 0) / 60, 1)}
    return {"step": None, "minutes": None}


def _train_to(config_path: Path, variant: Variant, exp: Path, data_root: Path, step: int, device: str | None,
              progress: bool) -> Path:
    """Train ``variant`` until ``step`` (resuming from its latest checkpoint); its checkpoint there."""
    final = exp / f"checkpoint_{step:08d}.pt"
    if not final.is_file():
        config = load_config(config_path, variant.overrides + [f"train.max_steps={step}"])
        Trainer(config, data_root, exp, resume=any(exp.glob("checkpoint_*.pt")), device=device,
                progress=progress).fit()
    return final


def curve_point(loaded: checkpoint.LoadedModel, data_root: Path, out: Path, limit: int, use_asr: bool,
                metrics: list[dict], device: str | None) -> dict:
    """One point of a learning curve: free-running failures (and WER/CER) on the first ``limit``
    test sentences and the teacher-forced validation figures logged at that step (a multi-head
    model's best head's too, ``val_true_best_head_*``)."""
    summary = evaluate(Synthesizer(loaded, device or "cpu"), data_root, out, "test", limit, use_asr, False,
                       progress=False)
    validation = [r for r in metrics if r.get("split") == "val" and r["step"] <= loaded.step]
    last = validation[-1] if validation else {}
    best_head = {f"val_{key}": value for key, value in last.items() if key.startswith("true_best_head")}
    return {"step": loaded.step, "train_minutes": round(last.get("train_seconds", 0) / 60, 1),
            "val_loss": last.get("loss"), "val_diagonal": last.get("attention_diagonal"),
            "val_focus": last.get("attention_focus"), "val_true_peak_accuracy": last.get("true_peak_accuracy"),
            "val_true_tracking_accuracy": last.get("true_tracking_accuracy"),
            "val_true_boundary_error_ms": last.get("true_boundary_error_ms"), **best_head,
            "wer": summary.get("wer"), "cer": summary.get("cer"),
            "utterances_with_failures": summary["utterances_with_failures"],
            "attention_failures": summary["attention_failures"]}


def training_devices(exp: Path) -> list[str]:
    """The devices that trained the run in ``exp``, in the order its sessions started (bf16
    numbers depend on the CPU: the same seed on another CPU is another run)."""
    return list(dict.fromkeys(session["device"] for session in ExperimentFolder(exp).read_sessions()))


def training_commits(exp: Path) -> list[str]:
    """The commits of the code that trained the run in ``exp``, in the order its sessions started
    (``commit`` above is the one that measured it; sessions from before commits were recorded say
    so)."""
    return list(dict.fromkeys(session.get("commit", "(not recorded)")
                              for session in ExperimentFolder(exp).read_sessions()))


def utterance_errors(eval_dir: Path) -> dict[str, list[int]]:
    """Per test utterance (in order): word errors and reference words, and character errors and
    reference characters (evaluations that recorded them), for paired comparisons."""
    rows = json.loads((eval_dir / "utterances.json").read_text())
    if not rows or "wer" not in rows[0]:
        return {}
    errors = {"ids": [r["id"] for r in rows],
              "word_errors": [r["substitutions"] + r["deletions"] + r["insertions"] for r in rows],
              "words": [len(normalize_for_scoring(r["text"]).split()) for r in rows]}
    if "char_errors" in rows[0]:
        errors.update(char_errors=[r["char_errors"] for r in rows], chars=[r["chars"] for r in rows])
    return errors


def finished_row(result_file: Path, variant: Variant, identity: dict) -> dict | None:
    """The row of a finished variant (None if it has not finished), refused when it was made with
    another config, corpus, step count or definition: a result file copied in from elsewhere (the
    committed ``docs/attention_study/results/``) counts only for the same study."""
    if not result_file.is_file():
        return None
    row = dict(json.loads(result_file.read_text()))
    made = {**PROTOCOL_BEFORE, **row.get("study", {})}
    differing = [k for k in RECORDED if k in made and made[k] != identity[k]]
    if row.get("overrides", variant.overrides) != variant.overrides:
        differing.append("variant definition")
    if differing:
        raise TTSError(f"{result_file} was made by a study with another {', '.join(differing)}: move it away to "
                       f"train variant {variant.name} again, or continue with the study that made it")
    return row


def record_alignment(loaded: checkpoint.LoadedModel, path: Path, device: str | None) -> None:
    """Save the free-running alignment ``(T_steps, T_text)`` of :data:`ALIGNMENT_SENTENCE` (float16,
    a few kB: commit it with the result file) with the sentence, its attention summary and the
    checkpoint's step."""
    panel = free_running(Synthesizer(loaded, device or "cpu"), ALIGNMENT_SENTENCE)
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        np.savez_compressed(f, alignment=panel.alignment.astype(np.float16), summary=panel.report.summary(),
                            step=loaded.step, text=ALIGNMENT_SENTENCE)


def truth_utterance(loaded: checkpoint.LoadedModel, data_root: Path) -> str | None:
    """The validation utterance every run's true alignment is recorded on: of those whose phone
    timings map cleanly onto their tokens, the one of median length (ties: the first id); None
    when the corpus has no timings. It depends on the corpus and the text settings only, so every
    run of a study gets the same one."""
    config = loaded.config
    dataset = FeatureDataset.of(data_root, config, "val")
    truth = TrueIntervals(data_root, config.audio, Tokenizer.for_config(config.text, loaded.inventory).ids_to_symbols)
    if not truth.available:
        return None
    timed = sorted((len(ids), uid) for uid, ids, _ in (dataset[i] for i in range(len(dataset)))
                   if truth(uid, ids.tolist()) is not None)
    return timed[(len(timed) - 1) // 2][1] if timed else None


def record_true_alignment(loaded: checkpoint.LoadedModel, data_root: Path, path: Path) -> bool:
    """Save the teacher-forced alignment ``(T_steps, T_text)`` of :func:`truth_utterance` (float16)
    with the token really being said at each step ``(T_steps,)`` (-1: none; from the corpus's phone
    timings), the utterance, the checkpoint's step and its scores against the truth: a few kB to
    commit with the result file. False (and nothing written) when the corpus has no timings."""
    uid = truth_utterance(loaded, data_root)
    if uid is None:
        return False
    panel = teacher_forced(loaded, data_root, uid)
    score = panel.true_score
    assert panel.truth is not None and score is not None  # truth_utterance chose it for its clean timings
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        np.savez_compressed(f, alignment=panel.alignment.astype(np.float16), truth=panel.truth.astype(np.int16),
                            utterance=uid, step=loaded.step, peak_accuracy=score.peak_accuracy,
                            tracking_accuracy=score.tracking_accuracy, boundary_error_ms=score.boundary_error_ms)
    return True


def record_missing_true_alignment(out: Path, name: str, evaluated: Path, data_root: Path) -> None:
    """Variant ``name``'s true alignment from its ``evaluated`` checkpoint, where it has none and
    the checkpoint is here (runs finished before it was recorded)."""
    if evaluated.is_file() and not true_alignment_file(out, name).is_file():
        record_true_alignment(checkpoint.load(evaluated), data_root, true_alignment_file(out, name))


def record_missing_alignments(out: Path, data_root: Path, evaluate: str, steps: int, device: str | None) -> None:
    """The alignment files of every finished variant whose evaluated checkpoint (``evaluate``:
    "best" or "last", the update ``steps``) is in the study folder: the free-running one where it
    has none of :data:`ALIGNMENT_SENTENCE` (variants that finished before alignments were recorded,
    or recorded another sentence), the true one where it has none."""
    plan = StudyPlan(steps=steps, evaluate=evaluate)
    for result_file in sorted((out / "results").glob("*.json")):
        evaluated = evaluated_checkpoint(out / result_file.stem, plan)
        if not evaluated.is_file():
            continue
        if alignment_text(alignment_file(out, result_file.stem)) != ALIGNMENT_SENTENCE:
            record_alignment(checkpoint.load(evaluated), alignment_file(out, result_file.stem), device)
        record_missing_true_alignment(out, result_file.stem, evaluated, data_root)


def run_variant(config_path: Path, data_root: Path, out: Path, variant: Variant, plan: StudyPlan,
                device: str | None, progress: bool, identity: dict) -> dict:
    """Train one variant to ``plan.steps``, stopping every ``plan.curve_every`` updates for a curve
    point; then the full test split (and the suite). Returns its row, also written to
    ``out/results/<variant>.json`` (small: commit it) with what made it (``identity``'s config,
    corpus and steps), so a copy of it skips the variant only in the same study."""
    result_file = out / "results" / f"{variant.name}.json"
    finished = finished_row(result_file, variant, identity)
    if finished is not None:
        if plan.long_form and "long_form" not in finished:
            finished["long_form"] = long_form_of(out / variant.name, plan, data_root, device, progress)
            result_file.write_text(json.dumps(finished, indent=1))
        record_missing_true_alignment(out, variant.name, evaluated_checkpoint(out / variant.name, plan), data_root)
        return finished
    compute_features(data_root, load_config(config_path, variant.overrides), progress=progress)
    exp = out / variant.name
    curve_file = exp / "curve.json"
    curve: list[dict] = json.loads(curve_file.read_text()) if curve_file.is_file() else []
    for step in range(plan.curve_every, plan.steps + 1, plan.curve_every):
        final = _train_to(config_path, variant, exp, data_root, step, device, progress)
        if any(point["step"] == step for point in curve):
            continue
        curve.append(curve_point(checkpoint.load(final), data_root, exp / "curve" / f"{step:08d}", plan.curve_limit,
                                 plan.use_asr, read_metrics(exp / "metrics.jsonl"), device))
        curve_file.write_text(json.dumps(curve, indent=1))
    loaded = checkpoint.load(evaluated_checkpoint(exp, plan))
    synthesizer = Synthesizer(loaded, device or "cpu")
    if not (exp / "eval" / "summary.json").is_file():
        evaluate(synthesizer, data_root, exp / "eval", "test", plan.eval_limit, plan.use_asr, plan.use_mos, progress)
    metrics = read_metrics(exp / "metrics.jsonl")
    validation = [r for r in metrics if r.get("split") == "val"]
    train_seconds = validation[-1].get("train_seconds", 0)
    cache_stats = json.loads((feature_dir(data_root, loaded.config.audio, loaded.config.text) / "stats.json").read_text())
    row: dict[str, Any] = {"variant": variant.name, "overrides": variant.overrides, "steps": plan.steps,
                           "seed": loaded.config.train.seed, "commit": code_version(),
                           "trained_by_commits": training_commits(exp),
                           **throughput(exp, cache_stats["frames_per_utterance"]["mean"]),
                           "study": {k: identity[k] for k in RECORDED},
                           "aligned_at": alignment_point(metrics, plan.aligned_accuracy),
                           "evaluated": {"checkpoint": plan.evaluate, "step": loaded.step},
                           "training_minutes": round(train_seconds / 60, 1),
                           "seconds_per_update": round(train_seconds / plan.steps, 3),
                           "decoder_step_ms": decoder_step_ms(loaded.model),
                           "val_loss": validation[-1]["loss"], "val_diagonal": validation[-1]["attention_diagonal"],
                           "val_first_token_skips": validation[-1].get("first_token_skips"),
                           "trained_on": training_devices(exp), "curve": curve,
                           "test": json.loads((exp / "eval" / "summary.json").read_text()),
                           "test_utterances": utterance_errors(exp / "eval")}
    if plan.suite:
        if not (exp / "suite" / "summary.json").is_file():
            run_suite(synthesizer, exp / "suite", data_root=data_root, use_asr=plan.use_asr, use_mos=plan.use_mos,
                      progress=progress, categories=STUDY_SUITE, long_passages=STUDY_LONG_PASSAGES)
        row["suite"] = json.loads((exp / "suite" / "summary.json").read_text())
    if plan.long_form:
        row["long_form"] = long_form_of(exp, plan, data_root, device, progress)
    record_alignment(loaded, alignment_file(out, variant.name), device)
    record_true_alignment(loaded, data_root, true_alignment_file(out, variant.name))
    result_file.parent.mkdir(parents=True, exist_ok=True)
    result_file.write_text(json.dumps(row, indent=1))
    return row


def evaluated_checkpoint(exp: Path, plan: StudyPlan) -> Path:
    """The checkpoint of a run that its end-of-run measures read: the best validation's or the last."""
    return exp / ("best.pt" if plan.evaluate == "best" else f"checkpoint_{plan.steps:08d}.pt")


def long_form_of(exp: Path, plan: StudyPlan, data_root: Path, device: str | None, progress: bool) -> dict:
    """The long-form summary (per multiple, :func:`~tts.evaluation.long_form.run_long_form`) of the
    run's ``plan.evaluate`` checkpoint, measured once into ``exp/long_form``."""
    summary_file = exp / "long_form" / "summary.json"
    if not summary_file.is_file():
        loaded = checkpoint.load(evaluated_checkpoint(exp, plan))
        run_long_form(Synthesizer(loaded, device or "cpu"), data_root, exp / "long_form", use_asr=plan.use_asr,
                      use_mos=False, progress=progress)
    summary = json.loads(summary_file.read_text())
    return {"longest_training_tokens": summary["longest_training_tokens"],
            "multiples": {m: {k: s.get(k) for k in ("utterances", "cer", "reference_cer", "attention_failures", "lost",
                                                  "lost_at_median")} for m, s in summary["multiples"].items()}}


def corpus_fingerprint(data_root: Path) -> str:
    """A hash of the corpus's transcripts and splits: a study refuses a corpus that changed under it."""
    digest = hashlib.sha1((data_root / "metadata.csv").read_bytes())
    for split in sorted((data_root / "splits").glob("*.txt")):
        digest.update(split.read_bytes())
    return digest.hexdigest()[:12]


def run_study(config_path: str | Path, data_root: str | Path, out: str | Path, variants: list[Variant],
              plan: StudyPlan, device: str | None = None, progress: bool = True) -> dict:
    """Every variant in turn (a finished one is read back from its result file); then the report
    (:func:`~tts.evaluation.study_report.write_report`) under ``out``."""
    config_path, data_root, out = Path(config_path), require_corpus(data_root), Path(out)
    if not config_path.is_file():
        raise TTSError(f"config file {config_path} does not exist")
    if len({v.name for v in variants}) != len(variants) or not variants:
        raise TTSError("give at least one variant, each with its own name")
    configs = {v.name: load_config(config_path, v.overrides) for v in variants}  # all load before anything trains
    if plan.evaluate not in ("last", "best"):
        raise TTSError(f"evaluate the 'last' or the 'best' checkpoint, not {plan.evaluate!r}")
    if plan.steps % plan.curve_every:
        raise TTSError(f"--steps {plan.steps} is not a multiple of --curve-every {plan.curve_every}: every curve "
                       f"point needs its checkpoint")
    for variant in variants:
        if plan.curve_every % configs[variant.name].train.checkpoint_every:
            raise TTSError(f"--curve-every {plan.curve_every} is not a multiple of train.checkpoint_every "
                           f"({configs[variant.name].train.checkpoint_every}) of variant {variant.name}")
    identity = _identity(config_path, data_root, plan, variants)
    _claim(out, identity)
    for variant in variants:
        run_variant(config_path, data_root, out, variant, plan, device, progress, identity)
    return write_report(out, str(config_path), str(data_root), plan.steps, ALIGNMENT_SENTENCE)
