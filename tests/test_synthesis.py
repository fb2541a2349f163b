import json
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf
import torch
from PIL import Image

from tts import checkpoint, devices
from tts.config import resolve_inference
from tts.data import feature_dir
from tts.devices import computes_bf16
from tts.errors import TTSError
from tts.metrics import Failure
from tts.synthesis import Synthesizer


def tts_cli(*args):
    return subprocess.run([sys.executable, "-m", "tts.cli", *args], capture_output=True, text=True, timeout=300)


#: a barely trained model never stops: short step limits and few Griffin-Lim iterations keep tests quick
FAST = {"max_frames_per_token": 2, "griffin_lim.iterations": 2}


@pytest.fixture(scope="module")
def synthesizer(tiny_experiment):
    return Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt", changes=FAST)


def test_synthesizer_results_are_consistent(synthesizer):
    results = synthesizer(["A cat sat.", "Dogs run fast. The sun is hot!"],
                          resolve_inference(synthesizer.settings, {"max_frames_per_token": 3}))
    assert [len(r.segments) for r in results] == [1, 2]
    hop = synthesizer.config.audio.hop_length
    for r in results:
        assert r.sample_rate == 22050 and r.waveform.dtype == np.float32
        assert len(r.waveform) == (r.mel.shape[1] - 1) * hop
        assert r.alignment.shape == (r.mel.shape[1] // 2, len(r.tokens))
        assert r.stop_probs.shape == (r.alignment.shape[0],)
        assert set(r.timings) == {"frontend", "acoustic", "vocoder", "total"}
        assert r.timings["total"] == pytest.approx(r.timings["frontend"] + r.timings["acoustic"] + r.timings["vocoder"])
        assert r.rtf == pytest.approx(r.timings["total"] / r.duration)
    # a barely trained model never stops: every sentence is flagged
    assert Failure.STEP_LIMIT in results[1].failures and all(s.report.step_limit_hit for s in results[1].segments)


def test_synthesize_cli_writes_wavs_mels_and_plots(tiny_experiment, tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("A cat sat on the mat.\n\n   \n?!?\nDogs run fast. Birds fly south.\n")
    out = tts_cli("synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--text-file",
                  str(lines), "--out", str(tmp_path / "out"), "--max-frames-per-token", "3", "--gl-iters", "4")
    assert out.returncode == 0, out.stderr
    assert "skipped 2 empty line(s)" in out.stdout and "skipped line 2: text has nothing to speak" in out.stdout
    assert "RTF" in out.stdout and "step-limit hit(s)" in out.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert len(summary["utterances"]) == 2 and summary["step_limit_hits"] == 2 and summary["precision"] == "fp32"
    for name in ("utt001", "utt002"):
        wav, sr = sf.read(tmp_path / "out" / f"{name}.wav")
        mel = np.load(tmp_path / "out" / f"{name}.npy")
        assert sr == 22050 and mel.shape[0] == 80 and len(wav) == (mel.shape[1] - 1) * 256
        assert Image.open(tmp_path / "out" / f"{name}.png").size[0] >= 800


def test_synthesize_single_wav_path(tiny_experiment, tmp_path):
    out = tts_cli("synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--text", "Hi there.",
                  "--out", str(tmp_path / "hi.wav"), "--max-frames-per-token", "2", "--gl-iters", "2", "--no-plots")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "hi.wav").is_file() and not (tmp_path / "hi.png").exists()


def test_bad_checkpoints_are_one_line(tmp_path):
    out = tts_cli("synthesize", "--checkpoint", str(tmp_path / "nope.pt"), "--text", "Hi.", "--out", str(tmp_path))
    assert out.returncode == 2 and out.stderr.strip() == f"error: checkpoint {tmp_path / 'nope.pt'} does not exist"
    (tmp_path / "fake.pt").write_text("hello")
    out = tts_cli("synthesize", "--checkpoint", str(tmp_path / "fake.pt"), "--text", "Hi.", "--out", str(tmp_path))
    assert out.returncode == 2 and "not a readable checkpoint" in out.stderr and out.stderr.count("\n") == 1


def test_incompatible_checkpoint_is_refused(tiny_experiment, tmp_path):
    import torch

    payload = torch.load(tiny_experiment / "checkpoint_00000004.pt", weights_only=True)
    payload["config"]["model"]["tacotron2"]["decoder_rnn_dim"] = 32
    torch.save(payload, tmp_path / "bad.pt")
    with pytest.raises(TTSError, match="does not match this code"):
        Synthesizer.from_checkpoint(tmp_path / "bad.pt")
    payload["config"]["model"]["tacotron2"]["futuristic_option"] = 1
    torch.save(payload, tmp_path / "bad.pt")
    with pytest.raises(TTSError, match="incompatible version"):
        Synthesizer.from_checkpoint(tmp_path / "bad.pt")


def test_plot_alignment_teacher_forced_and_side_by_side(tiny_experiment, tiny_corpus, tmp_path):
    ckpts = [str(tiny_experiment / f"checkpoint_0000000{s}.pt") for s in (2, 4)]
    out = tts_cli("plot-alignment", "--checkpoint", ckpts[1], "--data", str(tiny_corpus), "--utterance", "TINY-0008",
                  "--out", str(tmp_path / "tf.png"))
    assert out.returncode == 0, out.stderr
    out = tts_cli("plot-alignment", "--checkpoint", *ckpts, "--text", "A cat sat.", "--out", str(tmp_path / "grid.png"),
                  "--max-frames-per-token", "3", "--gl-iters", "2")
    assert out.returncode == 0, out.stderr
    assert Image.open(tmp_path / "grid.png").size[0] > Image.open(tmp_path / "tf.png").size[0] * 0.8
    out = tts_cli("plot-alignment", "--checkpoint", ckpts[1], "--data", str(tiny_corpus), "--utterance", "NOPE",
                  "--out", str(tmp_path / "x.png"))
    assert out.returncode == 2 and "NOPE is not in the 'val' split" in out.stderr


def test_evaluate_and_report(tiny_experiment, tiny_corpus, tmp_path):
    from tts.evaluation.held_out import evaluate
    from tts.evaluation.report import build_report

    synth = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt",
                                        changes={**FAST, "max_frames_per_token": 3})
    summary = evaluate(synth, tiny_corpus, tiny_experiment / "eval", split="test", use_asr=False, use_mos=False,
                       progress=False)
    assert summary["utterances"] == 1 and summary["mcd_db"] > 0
    assert summary["attention_failures"]["step_limit_hits"] == 1 and summary["utterances_with_failures"] == 1
    table = (tiny_experiment / "eval" / "utterances.md").read_text()
    assert "TINY-0010" in table and "mcd_db" in table
    page = build_report(tiny_experiment).read_text()
    assert "losses.png" in page and "attention.png" in page and "step00000002_" in page and "step00000004_" in page
    assert "<audio controls" in page and "TINY-0010" in page


def test_inference_flags_given_once_reach_the_loop_the_vocoder_and_the_figure(tiny_experiment, tmp_path, monkeypatch):
    """Flags are resolved once into one InferenceConfig that travels down as it is: the decoding
    loop, Griffin-Lim and the figure's stop line all see what was given, nothing re-applies them."""
    from tts import cli, synthesis
    from tts.models import decoding
    from tts.vocoders import GriffinLim

    seen: dict[str, list] = {"resolved": [], "loop": [], "griffin_lim": [], "figure": []}
    resolve, decode, forward, write = (synthesis.resolve_inference, decoding.decode, GriffinLim.forward,
                                       synthesis.write_outputs)

    def spy_resolve(stored, changes):
        seen["resolved"].append(resolve(stored, changes))
        return seen["resolved"][-1]

    def spy_decode(model, ids, lengths, settings, last_token=None, on_step=None, speakers=None, speaker_vectors=None):
        seen["loop"].append(settings)
        return decode(model, ids, lengths, settings, last_token, on_step, speakers, speaker_vectors)

    def spy_forward(self, mel, lengths=None):
        seen["griffin_lim"].append(self.settings.iterations)
        return forward(self, mel, lengths)

    def spy_write(results, out, step, plots, stop_threshold, **kwargs):
        seen["figure"].append(stop_threshold)
        return write(results, out, step, plots=plots, stop_threshold=stop_threshold, **kwargs)

    monkeypatch.setattr(synthesis, "resolve_inference", spy_resolve)
    monkeypatch.setattr(decoding, "decode", spy_decode)
    monkeypatch.setattr(GriffinLim, "forward", spy_forward)
    monkeypatch.setattr(synthesis, "write_outputs", spy_write)
    assert cli.main(["synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--text",
                     "A cat. A dog.", "--out", str(tmp_path / "out"), "--stop-threshold", "0.125", "--gl-iters", "3",
                     "--max-frames-per-token", "2", "inference.sentence_pause=0.5"]) == 0
    (settings,) = seen["resolved"]  # resolved once
    assert (settings.stop_threshold, settings.griffin_lim.iterations, settings.sentence_pause) == (0.125, 3, 0.5)
    assert seen["loop"] and all(s is settings for s in seen["loop"])  # the very object, not a rebuilt copy
    assert seen["griffin_lim"] == [3, 3] and seen["figure"] == [0.125]  # each sentence vocoded on its own


def test_evaluate_vocodes_the_ceiling_with_the_settings_given(tiny_experiment, tiny_corpus, tmp_path, monkeypatch):
    """``--gl-iters`` reaches the reference's Griffin-Lim as well as ours: the ceiling is vocoded by
    the synthesizer's own vocoder, built once with the resolved settings."""
    pytest.importorskip("speechmos")
    from tts.evaluation.held_out import evaluate
    from tts.vocoders import GriffinLim

    synth = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt",
                                        changes={"max_frames_per_token": 3, "griffin_lim.iterations": 3})
    forward, iterations = GriffinLim.forward, []

    def spy(self, mel, lengths=None):
        iterations.append(self.settings.iterations)
        return forward(self, mel, lengths)

    monkeypatch.setattr(GriffinLim, "forward", spy)
    evaluate(synth, tiny_corpus, tmp_path / "eval", split="test", use_asr=False, progress=False)
    assert iterations == [3, 3]  # ours, then the ceiling


def test_the_dnsmos_gap_comes_with_its_standard_error():
    from tts.evaluation.scoring import paired_gap

    rows = [{"dnsmos_p808": a, "reference_dnsmos_p808": b} for a, b in [(3.0, 3.2), (3.1, 3.1), (2.9, 3.3)]]
    # differences 0.2, 0.0, 0.4: mean 0.2, sample std 0.2, standard error 0.2 / √3
    assert paired_gap(rows, "dnsmos_p808", "reference_dnsmos_p808") == {"gap": 0.2, "gap_standard_error": 0.115}
    assert paired_gap(rows[:1], "dnsmos_p808", "reference_dnsmos_p808") == {"gap": 0.2, "gap_standard_error": None}


def test_evaluate_with_the_recognizer(tiny_experiment, tiny_corpus, tmp_path):
    pytest.importorskip("faster_whisper")
    from tts.evaluation.held_out import evaluate
    from tts.metrics import error_counts

    synth = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt",
                                        changes={**FAST, "max_frames_per_token": 3})
    summary = evaluate(synth, tiny_corpus, tmp_path / "eval", split="test", progress=False)
    (row,) = json.loads((tmp_path / "eval" / "utterances.json").read_text())
    assert row["text"] == "Fish swim in the lake." and {"transcript", "reference_transcript", "cer"} <= set(row)
    ours, theirs = error_counts(row["text"], row["transcript"]), error_counts(row["text"], row["reference_transcript"])
    assert (summary["wer"], summary["reference_wer"]) == (round(ours.wer, 4), round(theirs.wer, 4))
    assert summary["precision"] == "fp32"
    assert summary["wer_ratio_to_reference"] == round(summary["wer"] / max(summary["reference_wer"], 1e-9), 2)
    assert (row["substitutions"], row["deletions"], row["insertions"]) == (
        ours.substitutions, ours.deletions, ours.insertions) == (summary["substitutions"], summary["deletions"],
                                                                 summary["insertions"])
    assert 1.0 <= row["dnsmos_p808"] <= 5.0 and summary["reference_dnsmos_p808"] == row["reference_dnsmos_p808"]
    assert summary["dnsmos_p808_gap"] == round(row["reference_dnsmos_p808"] - row["dnsmos_p808"], 3)


def test_validate_reproduces_the_trainers_figures(tiny_experiment, tiny_corpus, tmp_path):
    """``tts validate`` on a saved checkpoint gives the numbers the trainer logged at that step."""
    logged = [json.loads(line) for line in (tiny_experiment / "metrics.jsonl").read_text().splitlines()]
    at_4 = next(r for r in logged if r.get("split") == "val" and r["step"] == 4)
    out = tts_cli("validate", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--data", str(tiny_corpus))
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["checkpoint_step"] == 4 and summary["split"] == "val" and summary["utterances"] == 2
    for key in ("loss", "mel", "stop", "attention_focus", "attention_diagonal", "text_reliance"):
        assert summary[key] == pytest.approx(at_4[key], rel=1e-4, abs=1e-6), key
    bad = tts_cli("validate", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--data",
                  str(tiny_corpus), "--split", "dev")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no split 'dev'" in bad.stderr
    assert "train, val, test" in bad.stderr


def test_validate_transcribes_teacher_forced_speech(tiny_experiment, tiny_corpus, monkeypatch):
    from tts.evaluation import validate

    heard = []

    class HalfHearing:  # hears the first two of the five words of the reference
        def __call__(self, waveform, sample_rate):
            heard.append((len(waveform), sample_rate))
            return "I see"

    monkeypatch.setattr(validate, "Recognizer", HalfHearing)
    loaded = checkpoint.load(tiny_experiment / "checkpoint_00000004.pt")
    summary = validate.validate_checkpoint(loaded, tiny_corpus, limit=1, asr_utterances=3, progress=False)
    assert summary["utterances"] == 1 and summary["asr_utterances"] == 1  # no more than the split holds
    assert summary["teacher_forced_wer"] == 0.6  # "I see two blue cars." → 3 of 5 words missing
    cache = feature_dir(tiny_corpus, loaded.config.audio, loaded.config.text)
    (frames,) = [json.loads(line)["n_frames"] for line in (cache / "manifest.jsonl").read_text().splitlines()
                 if '"TINY-0008"' in line]
    assert heard == [((frames - 1) * 256, 22050)]  # the utterance's teacher-forced mel through Griffin-Lim
    assert "text_reliance" not in summary  # a batch of one has no neighbour to swap texts with


def test_export_release_checkpoint(tiny_experiment, tmp_path):
    import torch

    out = tts_cli("export", str(tiny_experiment / "checkpoint_00000004.pt"), "inference.stop_after_last_token=true",
                  "--out", str(tmp_path / "release.pt"))
    assert out.returncode == 0, out.stderr
    payload = torch.load(tmp_path / "release.pt", weights_only=True)
    assert "optimizer" not in payload and payload["step"] == 4
    assert payload["config"]["inference"]["stop_after_last_token"] is True
    assert all(v.dtype == torch.float16 for v in payload["model"].values() if v.is_floating_point())
    full = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt", changes=FAST)
    half = Synthesizer.from_checkpoint(tmp_path / "release.pt", changes=FAST)
    a = full(["A cat sat."])[0]
    b = half(["A cat sat."])[0]
    assert np.abs(a.mel - b.mel).mean() < 0.05
    assert (tmp_path / "release.pt").stat().st_size < 0.6 * (tiny_experiment / "checkpoint_00000004.pt").stat().st_size


def test_int8_inference_is_close_to_fp32(synthesizer, tiny_experiment):
    int8 = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt", precision="int8", changes=FAST)
    a = synthesizer(["Dogs run fast."])[0]
    b = int8(["Dogs run fast."])[0]
    assert a.mel.shape == b.mel.shape
    assert np.abs(a.mel - b.mel).mean() < 0.1 * np.abs(a.mel).mean()


@pytest.mark.skipif(not computes_bf16(torch.device("cpu")), reason="this CPU has no bfloat16 arithmetic (AVX2 only)")
def test_bf16_decoding_is_close_to_fp32_and_hands_on_float32(synthesizer, tiny_experiment, tmp_path):
    bf16 = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt", precision="bf16", changes=FAST)
    a = synthesizer(["Dogs run fast."])[0]
    b = bf16(["Dogs run fast."])[0]
    assert b.mel.dtype == np.float32 and b.alignment.dtype == np.float32 and b.waveform.dtype == np.float32
    assert a.mel.shape == b.mel.shape
    assert 0 < np.abs(a.mel - b.mel).mean() < 0.05 * np.abs(a.mel).mean()
    assert bf16.fingerprint() != synthesizer.fingerprint()
    out = tts_cli("synthesize", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--text", "Hi there.",
                  "--bf16", "--out", str(tmp_path / "hi.wav"), "--max-frames-per-token", "2", "--gl-iters", "2",
                  "--no-plots")
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "summary.json").read_text())["precision"] == "bf16"


def test_bf16_is_refused_where_the_cpu_would_emulate_it(tiny_experiment, monkeypatch):
    monkeypatch.setattr(devices, "computes_bf16", lambda device: False)
    with pytest.raises(TTSError, match=r"\(no AVX-512 or AMX\), so bf16 would be slower than float32; drop --bf16"):
        Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt", precision="bf16", changes=FAST)
    with pytest.raises(TTSError, match="int8 inference runs on the CPU only"):
        devices.check_precision("int8", "cuda")
    with pytest.raises(TTSError, match="precision 'fp16' is not one of fp32, bf16, int8"):
        devices.check_precision("fp16", "cpu")


def test_int8_and_bf16_exclude_each_other_on_the_command_line(tmp_path):
    out = tts_cli("synthesize", "--text", "A cat sat.", "--int8", "--bf16", "--out", str(tmp_path / "a.wav"))
    assert out.returncode == 2 and "argument --bf16: not allowed with argument --int8" in out.stderr
    assert not (tmp_path / "a.wav").exists()


def test_a_paragraph_sounds_as_its_sentences_said_one_by_one(synthesizer):
    """Sentences are vocoded on their own and joined with silence: the paragraph's audio is its
    sentences' audio (decoded in the same batch) with pauses, and its length follows the joined mel."""
    sentences = ["A cat sat.", "Dogs run fast.", "The sun is hot!"]
    (paragraph,) = synthesizer([" ".join(sentences)])
    alone = synthesizer(sentences)
    hop, r = synthesizer.config.audio.hop_length, synthesizer.model.reduction_factor
    pause = (paragraph.pause_steps * r + 1) * hop
    expected = np.concatenate([alone[0].waveform, np.zeros(pause), alone[1].waveform, np.zeros(pause),
                               alone[2].waveform]).astype(np.float32)
    np.testing.assert_allclose(paragraph.waveform, expected, atol=1e-5)
    assert len(paragraph.waveform) == (paragraph.mel.shape[1] - 1) * hop
    assert paragraph.alignment.shape == (paragraph.mel.shape[1] // r, len(paragraph.tokens))


def test_hard_inputs_stop_or_say_which_item_hit_the_limit(synthesizer, caplog):
    texts = ["A.", "I", "123 456", " ".join(["go"] * 50) + ".", ", and ".join(["the boat left the harbour"] * 12) + "."]
    results = synthesizer(texts, resolve_inference(synthesizer.settings, {"split_sentences": False}))
    assert [len(r.segments) for r in results] == [1] * 5  # the long one is said in one go
    limited = [r.segments[0].text for r in results if Failure.STEP_LIMIT in r.failures]
    assert "I." in limited  # the warning names the sentence as it was said, closed with a full stop
    assert all(f"{text[:80]!r} hit the decoder step limit" in caplog.text for text in limited)


def test_robustness_suite_scores_every_category(synthesizer, tmp_path, monkeypatch):
    from tts.evaluation import robustness

    suite = {"categories": {"one_word": ["Go.", "Yes!"], "everyday": ["The kettle whistled. We left."]},
             "long_clauses": ["the boat left the harbour", "the gulls followed it"]}
    monkeypatch.setattr(robustness, "load_suite", lambda name: suite)
    monkeypatch.setattr(robustness, "DEFAULT_LONGEST_TOKENS", 15)
    summary = robustness.run_suite(synthesizer, tmp_path, engine="flite", use_asr=False, use_mos=False,
                                   progress=False, long_passages=2)
    assert list(summary["categories"]) == ["one_word", "everyday", "long"]
    assert [summary["categories"][c]["utterances"] for c in ("one_word", "everyday", "long")] == [2, 1, 6]
    rows = {r["id"]: r for r in json.loads((tmp_path / "utterances.json").read_text())}
    for passage in ("01", "02"):
        texts = [rows[f"long-{m}x-{passage}"]["text"] for m in (1, 2, 3)]
        lengths = [len(synthesizer.tokenizer.encode(text)) for text in texts]
        assert all(length >= m * 15 for length, m in zip(lengths, (1, 2, 3))) and lengths[0] < lengths[1] < lengths[2]
        assert all(text.count(".") == 1 for text in texts) and texts[2].startswith(texts[0][:-1])
    assert rows["long-1x-01"]["text"].startswith("The boat") and rows["long-1x-02"]["text"].startswith("The gulls")
    assert (tmp_path / "wavs" / "one_word-01.wav").is_file() and "| everyday | 1 |" in (
        tmp_path / "categories.md").read_text()
    assert rows["one_word-01"]["reference_seconds"] > 0.1  # flite read the text: the ceiling exists


def test_the_category_table_gives_the_dnsmos_gap_with_its_error():
    from tts.evaluation.robustness import category_table

    failures = {"skips": 0, "repeats": 1, "early_stops": 0, "step_limit_hits": 0}
    with_mos = {"utterances": 2, "dnsmos_p808": 3.0, "dnsmos_p808_gap": 0.1, "dnsmos_p808_gap_standard_error": 0.02,
                "attention_failures": failures}
    one = {**with_mos, "utterances": 1, "dnsmos_p808_gap_standard_error": None}
    table = category_table({"categories": {"one_word": with_mos, "long": one}, "overall": with_mos}).splitlines()
    assert "| DNSMOS gap | skips |" in table[0] and table[0].count("|") == table[1].count("|") == table[2].count("|")
    assert "| 3.0 |  | 0.1 ± 0.02 | 0 | 1 |" in table[2] and "| 0.1 | 0 | 1 |" in table[3]


def test_study_trains_and_compares_variants_and_resumes(tiny_corpus, tmp_path):
    import yaml
    from conftest import tiny_config_dict

    from tts.devices import cpu_instructions, describe_device
    from tts.evaluation import study
    from tts.evaluation.study_report import alignment_file, alignment_text, true_alignment_file

    config = tmp_path / "tiny.yaml"
    d = tiny_config_dict()
    d["train"].update(validate_every=2, checkpoint_every=2)
    config.write_text(yaml.safe_dump(d))
    variants = study.attention_variants(["location_sensitive", "forward"], "tacotron2")
    plan = study.StudyPlan(steps=4, curve_every=2, curve_limit=1, eval_limit=1, suite=False, use_asr=False, use_mos=False)
    result = study.run_study(config, tiny_corpus, tmp_path / "study", variants, plan, progress=False)
    assert [row["variant"] for row in result["rows"]] == ["location_sensitive", "forward"]
    for row in result["rows"]:
        assert row["test"]["utterances"] == 1 and row["val_loss"] > 0 and row["steps"] == 4
        assert [point["step"] for point in row["curve"]] == [2, 4]  # a curve point at every 2 updates
        assert row["curve"][0]["val_loss"] != row["curve"][1]["val_loss"]  # the validation of its own step
        assert row["seconds_per_update"] * 4 / 60 == pytest.approx(row["training_minutes"], abs=0.051)  # minutes: 0.1
        assert 0 < row["decoder_step_ms"] < 1000
        assert row["trained_on"] == [describe_device(torch.device("cpu"))]  # one session, this machine
        assert row["seed"] == 1234 and row["commit"] != "unknown" and row["threads"] >= 1
        assert row["trained_by_commits"] == [row["commit"]]  # every session's code, here the measuring code's
        assert row["cpu_instructions"] == [" ".join(cpu_instructions())] and row["utterances_per_lane_hour"] > 0
        saved = json.loads((tmp_path / "study" / "results" / f"{row['variant']}.json").read_text())
        assert saved == row  # the small result file to commit
    saved = checkpoint.read(tmp_path / "study" / "forward" / "checkpoint_00000004.pt")
    assert saved.config.model.tacotron2.attention.kind == "forward"
    table = (tmp_path / "study" / "study.md").read_text()
    assert "| forward |" in table and "4 updates per variant (2 finished)" in table
    for kind in ("location_sensitive", "forward"):  # one sentence's free-running alignment, small, to commit
        with np.load(alignment_file(tmp_path / "study", kind)) as saved:
            assert saved["alignment"].dtype == np.float16 and saved["alignment"].ndim == 2
            assert int(saved["step"]) == 4 and "focus" in str(saved["summary"])
            assert str(saved["text"]) == study.ALIGNMENT_SENTENCE
    assert (tmp_path / "study" / "alignments.png").stat().st_size > 10_000
    assert not true_alignment_file(tmp_path / "study", "forward").exists()  # this corpus has no phone timings
    alignment_file(tmp_path / "study", "forward").unlink()  # finished before alignments were recorded:
    study.record_missing_alignments(tmp_path / "study", tiny_corpus, "last", 4, None)  # again from its last checkpoint
    assert alignment_text(alignment_file(tmp_path / "study", "forward")) == study.ALIGNMENT_SENTENCE
    np.savez(alignment_file(tmp_path / "study", "forward"), alignment=np.eye(3, dtype=np.float16),
             summary="", step=4, text="Another sentence.")  # recorded for a sentence the study no longer shows:
    study.record_missing_alignments(tmp_path / "study", tiny_corpus, "last", 4, None)  # made again as well
    assert alignment_text(alignment_file(tmp_path / "study", "forward")) == study.ALIGNMENT_SENTENCE
    mtime = (tmp_path / "study" / "forward" / "checkpoint_00000004.pt").stat().st_mtime_ns
    study.run_study(config, tiny_corpus, tmp_path / "study", variants, plan, progress=False)  # finished: read back
    assert (tmp_path / "study" / "forward" / "checkpoint_00000004.pt").stat().st_mtime_ns == mtime
    best = study.StudyPlan(steps=4, curve_every=2, curve_limit=1, eval_limit=1, suite=False, use_asr=False,
                           use_mos=False, evaluate="best")
    with pytest.raises(TTSError, match="holds a study with another evaluate"):
        study.run_study(config, tiny_corpus, tmp_path / "study", variants, best, progress=False)
    with pytest.raises(TTSError, match="holds a study with another steps"):
        study.run_study(config, tiny_corpus, tmp_path / "study", variants, study.StudyPlan(6, 2, suite=False),
                        progress=False)
    with pytest.raises(TTSError, match="holds a study with another variant forward"):
        study.run_study(config, tiny_corpus, tmp_path / "study", [study.Variant("forward", ["optim.lr=0.01"])], plan,
                  progress=False)
    with pytest.raises(TTSError, match="--steps 5 is not a multiple of --curve-every 2"):
        study.run_study(config, tiny_corpus, tmp_path / "other", variants, study.StudyPlan(5, 2), progress=False)
    with pytest.raises(TTSError, match="--curve-every 3 is not a multiple of train.checkpoint_every"):
        study.run_study(config, tiny_corpus, tmp_path / "other", variants, study.StudyPlan(6, 3), progress=False)
    (tiny_corpus / "metadata.csv").write_text((tiny_corpus / "metadata.csv").read_text())  # same text: same corpus
    study.run_study(config, tiny_corpus, tmp_path / "study", variants, plan, progress=False)
    # a committed result file copied into a new study folder (a new machine) skips its variant...
    fresh = tmp_path / "fresh" / "results"
    fresh.mkdir(parents=True)
    row = json.loads((tmp_path / "study" / "results" / "forward.json").read_text())
    assert row["study"] == {"config": row["study"]["config"], "corpus": row["study"]["corpus"], "steps": 4,
                            "aligned_accuracy": None, "evaluate": "last"}
    (fresh / "forward.json").write_text(json.dumps(row))
    again = study.run_study(config, tiny_corpus, fresh.parent, variants[1:], plan, progress=False)
    assert again["rows"] == [row] and not (fresh.parent / "forward").exists()  # read, not trained
    study.record_missing_alignments(fresh.parent, tiny_corpus, "last", 4, None)  # no checkpoint here to make it from
    assert not alignment_file(fresh.parent, "forward").exists() and not (fresh.parent / "alignments.png").exists()
    # ...but only in the same study: one made on another corpus is refused, naming the file
    (fresh / "forward.json").write_text(json.dumps({**row, "study": {**row["study"], "corpus": "0123456789ab"}}))
    with pytest.raises(TTSError, match="forward.json was made by a study with another corpus"):
        study.run_study(config, tiny_corpus, fresh.parent, variants[1:], plan, progress=False)
    # a second seed of a finished variant (as the recipe trains the five best): its own run, compared
    # with its first run in the seeds table and left out of the main table
    repeat = study.Variant.parse("forward_seed2:model.tacotron2.attention.kind=forward,train.seed=2")
    result = study.run_study(config, tiny_corpus, tmp_path / "study", [repeat], plan, progress=False)
    rows = {row["variant"]: row for row in result["rows"]}
    assert checkpoint.read(tmp_path / "study" / "forward_seed2" / "checkpoint_00000004.pt").config.train.seed == 2
    assert rows["forward_seed2"]["val_loss"] != rows["forward"]["val_loss"]  # another initialization and batches
    table = (tmp_path / "study" / "study.md").read_text()
    assert "4 updates per variant (2 finished, 1 repeated with another seed)" in table
    assert "| forward_seed2 (forward) | 2 |" in table and "| forward_seed2 |" not in table
    with pytest.raises(TTSError, match="NAME or NAME:key=value"):
        study.Variant.parse("bad name:x=1")


def test_the_study_report_compares_each_variant_with_the_best_paired_over_sentences(tmp_path):
    from tts.evaluation.study_report import paired_wer_difference, write_report

    def row(name: str, errors: list[int], wer: float, overrides: list[str]) -> dict:
        return {"variant": name, "overrides": overrides, "aligned_at": {"step": 500, "minutes": 9.5},
                "seconds_per_update": 0.6,
                "decoder_step_ms": 1.2, "test": {"wer": wer, "cer": wer / 2, "attention_failures": {
                    "skips": 0, "repeats": 1, "early_stops": 0, "step_limit_hits": 0, "first_token_skips": 0}},
                "test_utterances": {"ids": ["a", "b", "c"], "word_errors": errors, "words": [10, 10, 10]},
                "curve": [{"step": 500, "wer": wer + 0.2, "cer": wer, "val_diagonal": 0.5},
                          {"step": 1000, "wer": wer, "cer": wer / 2, "val_diagonal": 0.9}]}

    good, worse = row("good", [0, 1, 2], 0.1, ["k=good"]), row("worse", [1, 3, 2], 0.2, ["k=worse"])
    repeat = row("good_seed2", [2, 3, 2], 0.23, ["k=good", "train.seed=2"])  # good again with another seed
    mean, error = paired_wer_difference(worse, good)
    assert mean == pytest.approx(0.1) and error == pytest.approx(np.std([0.1, 0.2, 0.0], ddof=1) / np.sqrt(3))
    (tmp_path / "results").mkdir()
    for r in (worse, good, repeat):
        (tmp_path / "results" / f"{r['variant']}.json").write_text(json.dumps(r))
    (tmp_path / "cost.json").write_text(json.dumps({"results": {  # tts bench attention-cost, for one of them
        "good": {"seconds_per_update": 2.0, "update_relative": 1.25, "ms_per_decoder_step": 3.5}}}))
    np.savez(tmp_path / "results" / "good.alignment.npz", alignment=np.eye(12, 6, dtype=np.float16),
             summary="focus 1.00", step=1000, text="A sentence.")  # the sentence's alignment of one of them
    np.savez(tmp_path / "results" / "worse.alignment.npz", alignment=np.eye(12, 6, dtype=np.float16),
             summary="focus 1.00", step=1000, text="Another sentence.")  # of another: left out
    result = write_report(tmp_path, "c.yaml", "d", 1000, "A sentence.")
    table = (tmp_path / "study.md").read_text().splitlines()
    assert table[0].endswith("1000 updates per variant (2 finished, 1 repeated with another seed).")
    assert table[4].startswith("| good | 500 (9.5) | 0.1 | – |")  # best first
    assert table[4].endswith("| 0.6 | 1.25 | 3.5 |")  # its run's clock, then the benchmark's side-by-side cost
    assert table[5].startswith("| worse | 500 (9.5) | 0.2 | +0.100 ± 0.058 |") and table[5].endswith("| 0.6 | – | – |")
    assert table[6:] == ["", "The same variants with another seed:", "",
                         "| repeat (of) | seed | test WER (repeat / first) | repeat − first (± SE) | "
                         "CER (repeat / first) | aligned at update (repeat / first) |", "|---|---|---|---|---|---|",
                         "| good_seed2 (good) | 2 | 0.23 / 0.1 | +0.133 ± 0.067 | 0.115 / 0.05 | 500 / 500 |"]
    assert len(result["rows"]) == 3
    for figure in ("wer_curves", "cer_curves", "diagonal_curves", "cost", "alignments"):
        assert (tmp_path / f"{figure}.png").stat().st_size > 10_000, figure
    assert Image.open(tmp_path / "alignments.png").width == 420  # one panel (4.2 in at 100 dpi): good's
    assert not (tmp_path / "length.png").exists()  # no variant ran the suite


def test_the_study_ranks_by_test_wer_and_breaks_ties_by_cer():
    from tts.evaluation.study_report import by_reading

    rows = [{"variant": name, "test": {"wer": wer, "cer": cer}}
            for name, wer, cer in [("tied_worse_cer", 0.5, 0.4), ("unread", 0.2, 0.1), ("tied_better_cer", 0.5, 0.3)]]
    rows.append({"variant": "no_test_yet", "test": {}})
    assert [r["variant"] for r in by_reading(rows)] == ["unread", "tied_better_cer", "tied_worse_cer", "no_test_yet"]


@pytest.mark.parametrize("texts, message", [
    (["Hello there.", 42], "not int 42"),
    (None, "not NoneType None"),
    (b"Hello.", "not bytes b'Hello.'"),
])
def test_the_python_api_says_what_it_expects(tiny_experiment, texts, message):
    synth = Synthesizer.from_checkpoint(tiny_experiment / "checkpoint_00000004.pt", changes=FAST)
    with pytest.raises(TTSError, match=f"give a text or a list of texts \\(str\\), {message}"):
        synth(texts)


def test_seeds_make_one_variant_each_named_and_seeded():
    from tts.evaluation.study import Variant, attention_variants, with_seeds

    seeded = with_seeds(attention_variants(["gmm", "forward"], "tacotron2"), [1, 2])
    assert [v.name for v in seeded] == ["gmm-s1", "gmm-s2", "forward-s1", "forward-s2"]
    assert seeded[1].overrides == ["model.tacotron2.attention.kind=gmm", "train.seed=2"]
    assert with_seeds([Variant("x", [])], [7])[0].overrides == ["train.seed=7"]
    with pytest.raises(TTSError, match="give each seed once"):
        with_seeds(seeded, [3, 3])


def test_aligned_is_the_first_validation_tracking_the_true_tokens_when_asked():
    from tts.evaluation.study import alignment_point

    metrics = [{"split": "val", "step": 2, "attention_diagonal": 0.95, "attention_focus": 0.6,
                "true_tracking_accuracy": 0.3, "true_peak_accuracy": 0.3, "train_seconds": 60},
               {"split": "val", "step": 4, "attention_diagonal": 0.97, "attention_focus": 0.7,
                "true_tracking_accuracy": 0.92, "true_peak_accuracy": 0.2, "train_seconds": 120}]
    assert alignment_point(metrics) == {"step": 2, "minutes": 1.0}  # diagonal and focal, on the wrong tokens
    assert alignment_point(metrics, 0.9) == {"step": 4, "minutes": 2.0}
    assert alignment_point(metrics, 0.95) == {"step": None, "minutes": None}


def test_settings_after_a_list_option_are_settings_not_its_values():
    """argparse gives ``--vocoder a inference.x=1`` both items; the command line means a setting."""
    from tts.cli import parse_args

    argv = ["synthesize", "--text", "Hi.", "--out", "x.wav", "--vocoder", "griffin-lim", "inference.noise_seed=3",
            "inference.prenet_dropout=true"]
    args = parse_args(argv)
    assert args.vocoder == ["griffin-lim"]
    assert args.settings == ["inference.noise_seed=3", "inference.prenet_dropout=true"]
    argv = ["evaluate", "--suite", "robustness", "--out", "o", "--categories", "one_word", "inference.noise_seed=2"]
    args = parse_args(argv)
    assert (args.categories, args.settings) == (["one_word"], ["inference.noise_seed=2"])
