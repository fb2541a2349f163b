"""The benchmarks' plumbing (their numbers are reported by `tts bench`, never asserted here)."""

import json

import pytest
import torch

from tts import cli, devices
from tts.devices import computes_bf16, cpu_instructions
from tts.models.quantize import int8_kernels


def test_attention_benchmark_reports_each_mechanism(capsys):
    cli.main(["bench", "attention", "--kinds", "location_sensitive", "forward", "--max-steps", "2",
              "--threads", "1", "--no-guided"])
    result = json.loads(capsys.readouterr().out)
    assert result["guided_attention"] is False and result["max_steps"] == 2
    assert sorted(result["results"]) == ["forward", "location_sensitive"]
    for row in result["results"].values():
        assert row["steps_to_alignment"] is None  # two steps never align
    cli.main(["bench", "attention", "--kinds", "forward", "--max-steps", "2", "--threads", "1", "--no-guided"])
    again = json.loads(capsys.readouterr().out)["results"]["forward"]
    first = result["results"]["forward"]
    assert (again["final_focus_rate"], again["final_diagonal_correlation"]) == (
        first["final_focus_rate"], first["final_diagonal_correlation"])  # the same seed, the same measures


def test_attention_cost_benchmark_times_every_mechanism_as_the_study_builds_it(capsys, tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text("model:\n  tacotron2: {embedding_dim: 32, encoder_conv_channels: 32, encoder_lstm_dim: 32, "
                      "prenet_dims: [32, 32], attention_rnn_dim: 64, decoder_rnn_dim: 64, reduction_factor: 2, "
                      "postnet: {layers: 2, channels: 32}, attention: {kind: content, attention_dim: 16}}\n"
                      "train: {amp: bf16}\n")
    cli.main(["bench", "attention-cost", "--config", str(config), "--kinds", "gmm", "location_sensitive",
              "--rounds", "2", "--threads", "1"])
    result = json.loads(capsys.readouterr().out)
    assert result["training_precision"] == "bf16" and result["rounds"] == 2
    assert result["train_batch"] == {"items": 8, "mel_frames": 4000, "reduction_factor": 2}
    rows = result["results"]
    assert list(rows) == ["gmm", "location_sensitive"]
    for key in ("update_relative", "decoder_step_relative"):  # relative to the cheapest, which is 1
        assert min(row[key] for row in rows.values()) == 1.0 and all(row[key] >= 1.0 for row in rows.values())
    for row in rows.values():
        assert 0 < row["seconds_per_update"] < 60 and 0 < row["ms_per_decoder_step"] < 1000
    transformer = tmp_path / "transformer.yaml"
    transformer.write_text("model:\n  name: transformer_tts\n")
    assert cli.main(["bench", "attention-cost", "--config", str(transformer), "--rounds", "1", "--threads", "1"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "transformer_tts model" in error[0] and "Tacotron2 config" in error[0]


def test_griffin_lim_benchmark_finds_the_iterations_that_match_librosa(capsys):
    cli.main(["bench", "griffin-lim", "--seconds", "1", "--iters", "64", "--threads", "1"])
    result = json.loads(capsys.readouterr().out)
    reference, matched = result["librosa"], result["ours_at_librosa_convergence"]
    assert reference["iterations"] == 60 and result["ours"]["iterations"] == 64
    assert 1 <= matched["iterations"] < 64 and matched["spectral_convergence"] <= reference["spectral_convergence"]
    assert result["target_met"] == (matched["speedup"] >= result["target_speedup"] == 3.0)
    cli.main(["bench", "griffin-lim", "--seconds", "1", "--iters", "2", "--threads", "1"])
    result = json.loads(capsys.readouterr().out)
    assert result["ours_at_librosa_convergence"] is None and result["target_met"] is False


def test_model_benchmark_times_any_configured_model(capsys, tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text("model:\n  name: transformer_tts\n  transformer_tts: {embedding_dim: 32, d_model: 32, heads: 2, "
                      "encoder_layers: 1, decoder_layers: 1, ffn_dim: 64, decoder_prenet_dims: [32, 32], "
                      "postnet: {layers: 2, channels: 32}, reduction_factor: 2}\n")
    reference = tmp_path / "nvidia.json"  # a timing harness's JSON line (tts.benchmarks.model.run_reference)
    reference.write_text(json.dumps({"impl": "NVIDIA/tacotron2", "cpu": "test", "threads": 1, "contended": False,
                                     "train": {"mel_frames_per_second": 1e9},  # out of reach: target missed
                                     "inference": {"ms_per_decoder_step_incl_encoder_postnet": 1e6}}))
    cli.main(["bench", "model", "--config", str(config), "--threads", "1", "--train-steps", "1",
              "--inference-steps", "12", "--reference-json", str(reference), "--precisions", "int8", "fp32", "bf16",
              "--batch-sizes", "2", "1", "--vocoder", "griffin-lim", "--iters", "4", "--speakers", "3"])
    result = json.loads(capsys.readouterr().out)
    assert (result["model"], result["reduction_factor"], result["attention"], result["device"], result["speakers"]) == (
        "transformer_tts", 2, "2-head encoder-decoder", "cpu", 3)  # a speaker table, conditioning timed
    assert sorted(result["train"]) == ["bf16", "fp32"]  # int8 is inference only
    assert result["hardware"].startswith("cpu (") and result["int8_kernels"] == int8_kernels().describe()
    assert result["cpu_instructions"] == cpu_instructions()  # what the int8 and bf16 figures depend on
    for train in result["train"].values():
        assert train["frames"] == 4000  # the harness's batch: 8 utterances evenly spaced from 400 to 600 frames
        assert train["mel_frames_per_second"] == pytest.approx(4000 / train["seconds_per_step"], rel=0.01)
        assert 100 < train["peak_memory_mib"] < 24 * 1024  # MiB of a process that holds torch
    steps = result["inference_ms_per_decoder_step"]
    assert list(steps) == ["fp32_batch1", "fp32_batch2", "bf16_batch1", "bf16_batch2", "int8_batch1", "int8_batch2"]
    hop_ms = 1000 * 256 / 22050
    for kind, rtf in result["inference_realtime_factor_batch1"].items():  # ms per step over ms of audio per step
        assert rtf == pytest.approx(steps[f"{kind}_batch1"] / (2 * hop_ms), abs=1e-3)
    synthesis = result["synthesis"]
    assert synthesis["vocoder"] == "griffin-lim, 4 iterations"
    assert synthesis["audio_seconds_per_item"] == pytest.approx(12 * 2 * hop_ms / 1000, abs=1e-3)
    for key in steps:  # decoding and Griffin-Lim: the batch's audio over their seconds
        batch_size = int(key.rsplit("batch", 1)[1])
        decoding = steps[key] * 12 / 1000
        assert synthesis[key]["seconds"] > decoding
        assert synthesis[key]["times_real_time"] == pytest.approx(
            batch_size * synthesis["audio_seconds_per_item"] / synthesis[key]["seconds"], rel=0.03)
    assert sorted(result["inference_peak_memory_mib"]) == ["bf16", "fp32", "int8"]
    speedup = result["speedup_over_reference"]
    fastest = max(t["mel_frames_per_second"] for t in result["train"].values())
    assert speedup["train_mel_frames_per_second"] == pytest.approx(fastest / 1e9, abs=1e-2)
    assert speedup["inference_int8_batch1"] == pytest.approx(1e6 / steps["int8_batch1"], rel=0.01)
    assert result["targets_met"] == {"train_mel_frames_per_second": False, "inference_fp32_batch1": True,
                                     "inference_int8_batch1": True}


def test_model_benchmark_synthesizes_through_the_default_vocoder_unless_told(capsys, tmp_path):
    from tts.vocoders.catalogue import DEFAULT_VOCODER

    config = tmp_path / "tiny.yaml"
    config.write_text("model:\n  tacotron2: {embedding_dim: 32, encoder_conv_channels: 32, encoder_lstm_dim: 32, "
                      "prenet_dims: [32, 32], attention_rnn_dim: 32, decoder_rnn_dim: 32, "
                      "postnet: {layers: 2, channels: 32}, reduction_factor: 2}\n")
    common = ["bench", "model", "--config", str(config), "--threads", "1", "--train-steps", "1",
              "--inference-steps", "8", "--precisions", "fp32", "--batch-sizes", "1", "2"]
    assert cli.main(common) == 0
    synthesis = json.loads(capsys.readouterr().out)["synthesis"]
    assert synthesis["vocoder"] == DEFAULT_VOCODER and sorted(synthesis["vocoder_seconds"]) == ["batch1", "batch2"]
    for key in ("fp32_batch1", "fp32_batch2"):
        assert synthesis[key]["realtime_factor"] == pytest.approx(1 / synthesis[key]["times_real_time"], rel=0.02)
    assert synthesis["fp32_batch1"]["seconds"] > synthesis["vocoder_seconds"]["batch1"] > 0

    config.write_text("audio: {n_mels: 40}\n")  # mels the pretrained HiFi-GAN was not trained on
    assert cli.main(common) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("error:") and "n_mels" in error[0]


def test_model_benchmark_refuses_int8_off_the_cpu():
    from tts.benchmarks.model import check_precisions
    from tts.errors import TTSError

    assert check_precisions(["bf16", "fp32"], "cuda") == ["fp32", "bf16"]
    with pytest.raises(TTSError, match="int8 runs on the CPU only"):
        check_precisions(["fp32", "int8"], "cuda")


def test_model_benchmark_refuses_a_reference_command_that_prints_no_json(capsys):
    assert cli.main(["bench", "model", "--reference-command", "echo not json; exit 3"]) == 2
    assert "exited 3 without a JSON line" in capsys.readouterr().err


def test_int8_benchmark_measures_the_bundled_voice_against_float32(capsys):
    cli.main(["bench", "int8", "--batch-sizes", "2", "--steps", "5", "--threads", "1"])
    result = json.loads(capsys.readouterr().out)
    kernels = int8_kernels()
    assert result["int8_kernels"] == kernels.describe() and result["int8_fast_here"] == kernels.fast
    assert result["int8_instructions"] == list(kernels.instructions) and result["checkpoint"] == "bundled"
    assert set(result["int8_instructions"]) <= set(result["cpu_instructions"]) == set(cpu_instructions())
    batch = result["batches"]["batch2"]
    assert batch["int8_speedup"] == pytest.approx(batch["fp32_ms_per_step"] / batch["int8_ms_per_step"], rel=0.02)
    forced = batch["mel_relative_error_teacher_forced"]
    assert 0 < forced["mean"] <= forced["max"] < 0.02  # each step's rounding, on every kernel path
    free = batch["mel_relative_error_free_running"]
    assert 0 < free["mean"] <= free["max"]
    aligned = batch["mel_relative_error_free_running_time_aligned"]
    assert 0 < aligned["mean"] <= aligned["max"]


def test_time_aligned_errors_forgive_a_moved_pause_but_not_different_frames():
    from tts.benchmarks.precision import relative_errors, time_aligned_relative_errors

    generator = torch.Generator().manual_seed(0)
    reference = torch.randn(1, 20, 60, generator=generator)
    reference[:, :, 54:] = reference[:, :, 54:55]  # ends in a steady frame (silence)
    late = torch.cat([reference[:, :, :30], reference[:, :, 29:30].expand(1, 20, 2), reference[:, :, 30:58]], dim=2)
    lengths = torch.tensor([60])
    assert relative_errors(late, reference, lengths)[0] > 0.5  # two frames late from the middle on
    assert time_aligned_relative_errors(late, reference, lengths)[0] < 1e-9  # the same frames, a pause longer
    noisy = reference + 0.05 * torch.randn(1, 20, 60, generator=generator)
    assert time_aligned_relative_errors(noisy, reference, lengths)[0] == pytest.approx(
        relative_errors(noisy, reference, lengths)[0], rel=0.05)


@pytest.mark.skipif(not computes_bf16(torch.device("cpu")), reason="this CPU has no bfloat16 arithmetic (AVX2 only)")
def test_bf16_benchmark_measures_the_bundled_voice_against_float32(capsys):
    cli.main(["bench", "bf16", "--batch-sizes", "1", "--steps", "5", "--threads", "1"])
    result = json.loads(capsys.readouterr().out)
    assert result["precision"] == "bf16" and "int8_kernels" not in result
    batch = result["batches"]["batch1"]
    assert batch["bf16_speedup"] == pytest.approx(batch["fp32_ms_per_step"] / batch["bf16_ms_per_step"], rel=0.02)
    forced = batch["mel_relative_error_teacher_forced"]
    assert 0 < forced["mean"] <= forced["max"] < 0.05


def test_bf16_benchmark_says_where_the_cpu_would_emulate_it(capsys, monkeypatch):
    monkeypatch.setattr(devices, "computes_bf16", lambda device: False)
    assert cli.main(["bench", "bf16", "--batch-sizes", "1", "--steps", "5", "--threads", "1"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("error: this CPU") and error[0].endswith("drop --bf16")


@pytest.mark.parametrize("cores, counts", [(1, [0]), (2, [0, 1]), (3, [0, 1, 2]), (16, [0, 1, 8, 15])])
def test_contention_benchmark_samples_none_one_half_and_all_but_one_busy_core(cores, counts):
    from tts.benchmarks.contention import busy_counts

    assert busy_counts(cores) == counts


def test_contention_benchmark_gives_fewer_threads_where_a_core_is_busy(monkeypatch):
    from tts.benchmarks import contention
    from tts.benchmarks.model import reference_batch
    from tts.threads import usable_cores

    monkeypatch.setattr(contention, "SENTENCE", "Hello there.")
    monkeypatch.setattr(contention, "reference_batch", lambda config, n_symbols, r, seed, batch_size: reference_batch(
        config, n_symbols, r, seed, batch_size, text=(10, 20), mel=(40, 60)))
    before = torch.get_num_threads()
    try:
        result = contention.bench_contention(vocoder="vocos-student", steps=4, runs=1, train_steps=1)
    finally:
        torch.set_num_threads(before)
    cores = len(usable_cores())
    assert result["cores"] == cores and list(result["results"]) == [f"busy_{n}" for n in contention.busy_counts(cores)]
    threads = sorted({cores, 1}, reverse=True)
    for row in result["results"].values():
        for n in threads:
            timing = row[f"threads_{n}"]
            assert timing["decoder_ms_per_step"] > 0 and timing["training_seconds_per_update"] > 0
            assert timing["synthesis_seconds"] > 0 and timing["synthesis_rtf"] > 0
    if cores > 1:  # the last row: every core but one spinning
        last = result["results"][f"busy_{cores - 1}"]
        assert last["measured_busy_cores"] >= cores - 1.4 and last["default_threads"] == 1


def test_onnx_benchmark_times_pytorch_float32_and_int8_exports_of_one_checkpoint(tiny_experiment, capsys):
    cli.main(["bench", "onnx", "--checkpoint", str(tiny_experiment / "checkpoint_00000004.pt"), "--int8",
              "--vocoder", "griffin-lim", "--steps", "3", "--runs", "1", "--threads", "1"])
    result = json.loads(capsys.readouterr().out)
    assert set(result["rtf"]) == {"torch", "onnx", "onnx_int8"} and result["vocoder"] == "griffin-lim"
    assert result["same_stop_step"] and result["max_mel_difference"] < 1e-3   # float32 graphs: PyTorch's mel
    assert set(result["int8"]) == {"speedup", "frames", "mel_relative_difference"}
    assert 0 < result["int8"]["mel_relative_difference"] < 0.1
