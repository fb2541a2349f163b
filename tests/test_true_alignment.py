"""Attention scored against the true phone timings: the measure, the mapping of Festival's
phones onto tokens and frames, ``tts validate``'s columns and ``tts align``."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest
import torch
from conftest import random_batch

from tts import cli
from tts.config import AudioConfig, LossConfig
from tts.data.timings import PhoneTiming, timings_path, write_timings
from tts.data.token_timings import map_timings
from tts.metrics.true_alignment import durations_from_alignment, true_alignment_score, true_tokens_of_steps
from tts.models.layers import decoder_steps
from tts.models.outputs import ModelOutput
from tts.training.losses import TTSLoss
from tts.training.validation import teacher_forced_metrics


def diagonal(steps: int, tokens: int, per_token: list[int]) -> np.ndarray:
    """A hard alignment that stays ``per_token[j]`` steps on token j."""
    alignment = np.zeros((steps, tokens))
    alignment[np.arange(steps), np.repeat(np.arange(tokens), per_token)] = 1.0
    return alignment


def test_durations_count_each_steps_frames_for_its_peak_and_sum_to_the_mel():
    alignment = diagonal(5, 3, [2, 1, 2])
    assert durations_from_alignment(alignment, 9, reduction_factor=2).tolist() == [4, 2, 3]  # last step: 1 frame
    with pytest.raises(ValueError, match="do not cover"):
        durations_from_alignment(alignment, 8, reduction_factor=2)


def test_a_true_alignment_scores_perfectly_and_a_late_one_by_its_lag():
    intervals = np.array([[0, 4], [4, 6], [np.nan, np.nan], [6, 10]], dtype=float)  # token 2 untimed (a space)
    assert true_tokens_of_steps(intervals, 5, 2).tolist() == [0, 0, 1, 3, 3]
    perfect = true_alignment_score(diagonal(5, 4, [2, 1, 0, 2]), intervals, 10, frame_ms=10.0, reduction_factor=2)
    assert (perfect.peak_accuracy, perfect.boundary_error_ms, perfect.scored_steps, perfect.timed_tokens) == (1.0, 0.0,
                                                                                                               5, 3)
    late = true_alignment_score(diagonal(5, 4, [3, 1, 0, 1]), intervals, 10, frame_ms=10.0, reduction_factor=2)
    # starts 0, 6, 8 against 0, 4, 6 frames; step 3 is on token 1 where token 3 is said (2 tokens off)
    assert late.boundary_error_ms == pytest.approx(40.0 / 3)
    assert late.peak_accuracy == pytest.approx(4 / 5)
    assert perfect.peak_offset == 0.0 and late.peak_offset == pytest.approx(-3 / 5)  # steps 2, 3: 1 and 2 behind
    ahead = np.zeros((5, 4))
    ahead[np.arange(5), [1, 1, 3, 3, 3]] = 1.0  # one token ahead of the truth [0, 0, 1, 3, 3] where it can be
    leading = true_alignment_score(ahead, intervals, 10, 10.0, 2)
    assert leading.peak_offset == pytest.approx((1 + 1 + 2) / 5)
    jumpy = np.zeros((5, 4))
    jumpy[np.arange(5), [2, 2, 3, 3, 3]] = 1.0  # against [0, 0, 1, 3, 3]: 2, 2, 2, 0, 0 ahead (median 2)
    scored = true_alignment_score(jumpy, intervals, 10, 10.0, 2)
    assert scored.peak_accuracy == pytest.approx(2 / 5) and scored.tracking_accuracy == pytest.approx(3 / 5)
    steady = np.zeros((5, 4))
    steady[np.arange(5), [2, 2, 3, 3, 3]] = 1.0
    steady_truth = np.array([[0, 4], [4, 10], [np.nan, np.nan], [np.nan, np.nan]], dtype=float)  # 0, 0, 1, 1, 1
    lead = true_alignment_score(steady, steady_truth, 10, 10.0, 2)
    assert lead.peak_accuracy == pytest.approx(0.0) and lead.tracking_accuracy == 1.0  # 2 ahead throughout


def test_festival_phones_map_onto_tokens_through_reductions_and_pauses():
    symbols = ["T", "UW1", " ", "R", "EH1", "D", ",", " ", "AE1", "N", "D", "~"]
    phones = [PhoneTiming("pau", 0.0, 0.1), PhoneTiming("t", 0.1, 0.2), PhoneTiming("ax", 0.2, 0.3),  # to → t ax
              PhoneTiming("r", 0.3, 0.4), PhoneTiming("eh", 0.4, 0.5), PhoneTiming("d", 0.5, 0.6),
              PhoneTiming("pau", 0.6, 0.8), PhoneTiming("ae", 0.8, 0.9), PhoneTiming("n", 0.9, 1.0),
              PhoneTiming("d", 1.0, 1.1), PhoneTiming("pau", 1.1, 1.3)]
    timings = map_timings(symbols, phones, offset=-0.1, frame_seconds=0.01)
    assert (timings.substitutions, timings.indels, timings.phones, timings.clean) == (1, 0, 8, True)
    assert timings.intervals[0].tolist() == pytest.approx([0.0, 10.0])  # "T" on the feature clock (0.1 s cut)
    assert timings.intervals[6].tolist() == pytest.approx([50.0, 70.0])  # the pause goes to the comma
    assert np.isnan(timings.intervals[[2, 7, 11]]).all()  # spaces between words said without a pause, EOS
    dropped = map_timings(symbols, [p for p in phones if p.phone != "eh"], 0.0, 0.01)
    assert (dropped.indels, dropped.clean) == (1, False) and np.isnan(dropped.intervals[4]).all()


@pytest.fixture(scope="module")
def timed_corpus(tiny_corpus, tmp_path_factory):
    """The tiny corpus with phone timings: each utterance's tokens' phones spread evenly over its wav."""
    import soundfile as sf

    from tts.config import TextConfig
    from tts.data.corpus import read_metadata
    from tts.text import Tokenizer

    root = tmp_path_factory.mktemp("timed") / "corpus"
    shutil.copytree(tiny_corpus, root)
    tokenizer = Tokenizer.for_config(TextConfig())
    for utt in read_metadata(root):
        phones = [s.rstrip("012").lower() for s in tokenizer.encode_verbose(utt.normalized).symbols
                  if s.rstrip("012").isalpha() and s.isupper()]
        seconds = sf.info(str(utt.wav_path(root))).duration
        edges = np.linspace(0.0, seconds, len(phones) + 1)
        write_timings(timings_path(root, utt.id), [PhoneTiming(p, a, b) for p, a, b in zip(phones, edges, edges[1:])])
    return root


class HeadsModel(torch.nn.Module):
    """Stands in for a multi-head model: for each item of :func:`random_batch`, layer 1's head 1 is
    the true alignment and every other head stays on the first token; ``alignments`` (the guided
    mean) is the mean of heads (0, 0) and (1, 1)."""

    reduction_factor = 2

    def forward(self, batch):
        steps = decoder_steps(batch.mels.shape[2], 2)
        heads = torch.zeros(len(batch.utterance_ids), 2, 2, steps, batch.ids.shape[1])
        heads[..., 0] = 1.0
        for i, (n_text, n_frames) in enumerate(zip(batch.text_lengths.tolist(), batch.mel_lengths.tolist())):
            truth = true_tokens_of_steps(even_intervals(n_text, n_frames), decoder_steps(n_frames, 2), 2)
            heads[i, 1, 1, : len(truth)] = torch.nn.functional.one_hot(torch.from_numpy(truth), batch.ids.shape[1]).float()
        mels = batch.mels.clone()
        return ModelOutput(mels, mels, torch.zeros(len(batch.utterance_ids), steps), (heads[:, 0, 0] + heads[:, 1, 1]) / 2,
                           heads)


class OneAlignmentModel(HeadsModel):
    """:class:`HeadsModel` as a model of one alignment (Tacotron 2's kind): no ``attention_heads``."""

    def forward(self, batch):
        return dataclasses.replace(super().forward(batch), attention_heads=None)


def even_intervals(n_text: int, n_frames: int) -> np.ndarray:
    """Each of ``n_text`` tokens said for an equal share of ``n_frames`` frames ``(T_text, 2)``."""
    edges = np.linspace(0.0, n_frames, n_text + 1)
    return np.stack([edges[:-1], edges[1:]], axis=1)


class EvenTruth:
    """True intervals of :func:`even_intervals` for the items of :func:`random_batch`."""

    frame_ms = 11.6
    frames = {"a": 20, "b": 13, "c": 7}

    def __call__(self, uid: str, ids: list[int]) -> np.ndarray:
        return even_intervals(len(ids), self.frames[uid])


def test_a_multi_head_model_is_scored_head_by_head_and_its_best_head_named():
    batch = random_batch(r=2)
    metrics, _ = teacher_forced_metrics(HeadsModel(), TTSLoss(LossConfig()), [batch], 0, truth=EvenTruth())
    assert metrics["true_best_head"] == 3.0  # layer 1, head 1 of 2 heads a layer
    assert metrics["true_best_head_tracking_accuracy"] == metrics["true_best_head_peak_accuracy"] == 1.0
    assert metrics["true_best_head_boundary_error_ms"] == pytest.approx(0.0, abs=EvenTruth.frame_ms * 2)
    assert metrics["true_tracking_accuracy"] < 1.0  # the guided mean ties on the first token: its peak is there
    metrics, _ = teacher_forced_metrics(OneAlignmentModel(), TTSLoss(LossConfig()), [batch], 0, truth=EvenTruth())
    assert "true_tracking_accuracy" in metrics and not any(k.startswith("true_best_head") for k in metrics)


def test_validate_scores_the_attention_against_the_timings(tiny_experiment, timed_corpus, capsys):
    checkpoint = str(tiny_experiment / "checkpoint_00000004.pt")
    assert cli.main(["validate", "--checkpoint", checkpoint, "--data", str(timed_corpus)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["true_timed_utterances"] >= 1
    assert 0.0 <= summary["true_peak_accuracy"] <= 1.0 and summary["true_boundary_error_ms"] > 0.0


def test_align_writes_durations_that_sum_to_each_mel_and_scores_them(tiny_experiment, timed_corpus, tmp_path, capsys):
    checkpoint = str(tiny_experiment / "checkpoint_00000004.pt")
    out = tmp_path / "durations"
    assert cli.main(["align", "--checkpoint", checkpoint, "--data", str(timed_corpus), "--out", str(out),
                     "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["utterances"] >= 2 and summary["timed_utterances"] >= 1 and summary["boundary_error_ms"] > 0
    records = [json.loads(line) for line in (out / "alignments.jsonl").read_text().splitlines()]
    lines = (out / "durations.txt").read_text().splitlines()
    assert len(lines) == len(records) == summary["utterances"]
    from tts import checkpoint as ckpt
    from tts.data import feature_dir

    config = ckpt.load(checkpoint).config  # other tests leave caches of other settings in the corpus
    cache = feature_dir(timed_corpus, config.audio, config.text)
    mels = {p.stem: np.load(p).shape[1] for p in (cache / "mels").glob("*.npy")}
    for line, record in zip(lines, records):
        uid, *durations = line.split()
        assert uid == record["id"] and [int(d) for d in durations] == record["durations"]
        assert sum(record["durations"]) == mels[uid] and len(record["durations"]) == len(record["tokens"])
    assert "boundary error" not in capsys.readouterr().err


def test_align_without_timings_writes_durations_and_says_why_there_is_no_error(tiny_experiment, tiny_corpus, tmp_path):
    out = tmp_path / "durations"
    assert cli.main(["align", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--data",
                     str(tiny_corpus), "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["boundary_error_ms"] is None and "has no phone timings" in summary["truth"]
    assert (out / "durations.txt").read_text().count("\n") == summary["utterances"]


@pytest.mark.parametrize("case, message", [
    ("vocoder", "vocoder checkpoint"),
    ("split", "no split 'dev'"),
    ("full", "already holds files"),
])
def test_align_refuses_bad_input_with_one_line_and_no_output(case, message, tiny_experiment, tiny_corpus, tmp_path,
                                                             capsys):
    checkpoint = str(tiny_experiment / "checkpoint_00000004.pt")
    out = tmp_path / "out"
    argv = ["align", "--checkpoint", checkpoint, "--data", str(tiny_corpus), "--out", str(out), "--no-progress"]
    if case == "vocoder":
        from tts import checkpoint as ckpt
        from tts.config import VocoderExperimentConfig
        from tts.vocoders import build_vocoder

        config = VocoderExperimentConfig(audio=AudioConfig())
        path = tmp_path / "vocoder.pt"
        ckpt.save_vocoder(path, build_vocoder(config.vocoder, config.audio), config, 1)
        argv[2] = str(path)
    elif case == "split":
        argv += ["--split", "dev"]
    else:
        out.mkdir()
        (out / "durations.txt").write_text("another run's\n")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert not out.exists() or [p.name for p in out.iterdir()] == (["durations.txt"] if case == "full" else [])
    assert not list(tmp_path.glob(".out.*"))


def test_every_run_of_a_study_records_one_utterance_against_its_truth(tiny_experiment, timed_corpus, tiny_corpus,
                                                                     tmp_path):
    from PIL import Image

    from tts import checkpoint
    from tts.evaluation import study
    from tts.evaluation.study_report import true_alignment_file, true_alignments_figure

    early, late = (checkpoint.load(tiny_experiment / f"checkpoint_0000000{step}.pt") for step in (2, 4))
    uid = study.truth_utterance(late, timed_corpus)
    assert uid is not None and uid == study.truth_utterance(early, timed_corpus)  # the corpus chooses, not the run
    out = tmp_path / "study"
    for name, loaded in (("forward-s1", late), ("forward-s2", early), ("content-s1", early)):
        assert study.record_true_alignment(loaded, timed_corpus, true_alignment_file(out, name))
    with np.load(true_alignment_file(out, "forward-s1")) as saved:
        steps, tokens = saved["alignment"].shape
        truth = saved["truth"]
        assert saved["alignment"].dtype == np.float16 and truth.shape == (steps,)
        assert str(saved["utterance"]) == uid and int(saved["step"]) == 4
        assert 0.0 <= float(saved["peak_accuracy"]) <= 1.0 and float(saved["boundary_error_ms"]) > 0.0
        said = truth[truth >= 0]
        assert said.max() < tokens and len(said) > steps // 2 and np.all(np.diff(said) >= 0)  # forward, in order
        score = true_alignment_score(saved["alignment"].astype(np.float32), np.full((tokens, 2), np.nan), 2 * steps,
                                     10.0, 2)
        assert np.isnan(score.peak_accuracy)  # (the scores need the truth: none without it)
    np.savez(true_alignment_file(out, "gmm-s1"), alignment=np.eye(6, 3, dtype=np.float16),
             truth=np.arange(6, dtype=np.int16) // 2, utterance="another", step=4, peak_accuracy=1.0,
             boundary_error_ms=0.0)  # of another utterance: left out
    rows = [{"variant": name, "seed": int(name[-1]), "test": {"wer": wer, "cer": wer / 2}}
            for name, wer in (("content-s1", 0.9), ("forward-s2", 0.2), ("forward-s1", 0.3), ("gmm-s1", 0.5))]
    true_alignments_figure(rows, out, tmp_path / "truth.png")
    assert Image.open(tmp_path / "truth.png").width == 2 * 420  # forward's first seed, then content
    assert not study.record_true_alignment(late, tiny_corpus, tmp_path / "none.npz")  # a corpus without timings
    assert not (tmp_path / "none.npz").exists()


def test_plot_alignment_draws_the_truth_where_the_corpus_has_timings(tiny_experiment, timed_corpus, tiny_corpus,
                                                                     tmp_path, capsys):
    from tts import checkpoint
    from tts.evaluation.alignment_figures import teacher_forced
    from tts.evaluation.study import truth_utterance

    loaded = checkpoint.load(tiny_experiment / "checkpoint_00000004.pt")
    uid = truth_utterance(loaded, timed_corpus)
    assert uid is not None
    timed, untimed = teacher_forced(loaded, timed_corpus, uid), teacher_forced(loaded, tiny_corpus, uid)
    assert timed.truth is not None and timed.truth.shape == (timed.alignment.shape[0],)
    assert timed.true_score is not None and 0.0 <= timed.true_score.peak_accuracy <= 1.0
    assert untimed.truth is None and untimed.true_score is None
    np.testing.assert_array_equal(timed.alignment, untimed.alignment)  # the truth is drawn, the attention the same
    ckpt = str(tiny_experiment / "checkpoint_00000004.pt")
    for checkpoints, name in (([ckpt], "one.png"), ([ckpt, ckpt], "two.png")):
        assert cli.main(["plot-alignment", "--checkpoint", *checkpoints, "--data", str(timed_corpus), "--utterance",
                         uid, "--out", str(tmp_path / name)]) == 0
        assert (tmp_path / name).stat().st_size > 10_000
    assert "wrote" in capsys.readouterr().out
