"""Bad input to every command: exit 2, exactly one ``error:`` line that names the problem, no
traceback, and nothing written. Each case runs ``tts.cli.main`` in this process (a traceback
would fail the test with the exception itself); a few run as real subprocesses too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
import yaml
from conftest import tiny_config_dict

from tts import cli

SR = 22050
OUT = "OUT"  # stands for a fresh output path of each case
TRAIN = ["train", "--config", "{cfg_good}", "--data", "{corpus}", "--out", OUT]
STUDY = ["study", "--config", "{cfg_good}", "--data", "{corpus}", "--out", OUT]


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_experiment, tiny_corpus) -> dict[str, str]:
    """Every bad (and a few good) inputs, by name."""
    d = tmp_path_factory.mktemp("bad")
    f: dict[str, str] = {"dir": str(d), "missing": str(d / "missing"),
                         "ckpt": str(tiny_experiment / "checkpoint_00000004.pt"), "corpus": str(tiny_corpus),
                         "exp": str(tiny_experiment)}

    def put(name: str, path: Path) -> None:
        f[name] = str(path)

    # ---------------------------------------------------------------- text
    (d / "empty.txt").write_text("")
    put("empty_txt", d / "empty.txt")
    (d / "blank.txt").write_text("\n   \n\t\n")
    put("blank_txt", d / "blank.txt")
    (d / "symbols.txt").write_text("?!?\n...\n###\n")
    put("symbols_txt", d / "symbols.txt")
    (d / "binary.txt").write_bytes(bytes(range(256)) * 40)
    put("binary_txt", d / "binary.txt")
    # ---------------------------------------------------------------- audio
    (d / "zero.wav").write_bytes(b"")
    put("zero_wav", d / "zero.wav")
    (d / "text.wav").write_text("this is not audio")
    put("text_wav", d / "text.wav")
    sf.write(d / "one.wav", np.zeros(1, dtype=np.float32), SR)
    put("one_sample_wav", d / "one.wav")
    sf.write(d / "short.wav", np.zeros(int(0.01 * SR), dtype=np.float32) + 0.1, SR)
    put("short_wav", d / "short.wav")
    tone = (0.3 * np.sin(np.arange(SR) * 0.05)).astype(np.float32)
    for name, value in (("nan", np.nan), ("inf", np.inf)):
        bad = tone.copy()
        bad[100] = value
        sf.write(d / f"{name}.wav", bad, SR, subtype="FLOAT")
        put(f"{name}_wav", d / f"{name}.wav")
    sf.write(d / "good.wav", tone, SR)
    put("good_wav", d / "good.wav")
    # ---------------------------------------------------------------- mels
    mel = np.random.default_rng(0).normal(-5, 1, size=(80, 40)).astype(np.float32)
    for name, array in {"mel_nan": np.where(np.arange(40) == 3, np.nan, mel), "mel_inf": mel + np.inf,
                        "mel_huge": mel + 1e30, "mel_bands": mel[:60], "mel_1d": mel[0], "mel_3d": mel[None],
                        "mel_empty": mel[:, :0], "mel_strings": np.array(["a", "b"]), "mel_good": mel}.items():
        np.save(d / f"{name}.npy", array)
        put(name, d / f"{name}.npy")
    np.save(d / "mel_object.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    put("mel_object", d / "mel_object.npy")
    (d / "mel_zero.npy").write_bytes(b"")
    put("mel_zero", d / "mel_zero.npy")
    np.save(d / "mel_one_frame.npy", mel[:, :1])
    put("mel_one_frame", d / "mel_one_frame.npy")
    np.savez(d / "mel_two.npz", mel=mel, other=mel)
    put("mel_two_npz", d / "mel_two.npz")
    # ---------------------------------------------------------------- checkpoints
    payload = torch.load(f["ckpt"], weights_only=True)
    for name, change in {"ckpt_step": ("step", "abc"), "ckpt_config": ("config", "a string"),
                         "ckpt_version": ("version", 99), "ckpt_symbols": ("symbols", "x"),
                         "ckpt_model": ("model", {"w": "not a tensor"})}.items():
        torch.save({**payload, change[0]: change[1]}, d / f"{name}.pt")
        put(name, d / f"{name}.pt")
    nan = {**payload, "model": {k: v.clone() for k, v in payload["model"].items()}}
    nan["model"]["decoder.mel_proj.weight"][0, 0] = float("nan")
    torch.save(nan, d / "ckpt_nan.pt")
    put("ckpt_nan", d / "ckpt_nan.pt")
    torch.save({"a": 1}, d / "foreign.pt")
    put("ckpt_foreign", d / "foreign.pt")
    (d / "truncated.pt").write_bytes(Path(f["ckpt"]).read_bytes()[:2000])
    put("ckpt_truncated", d / "truncated.pt")
    (d / "text.pt").write_text("hello")
    put("ckpt_text", d / "text.pt")
    other = {**payload, "config": {**payload["config"]}}
    other["config"]["model"] = {**other["config"]["model"], "tacotron2": {**other["config"]["model"]["tacotron2"],
                                                                         "decoder_rnn_dim": 32}}
    torch.save(other, d / "ckpt_shape.pt")
    put("ckpt_shape", d / "ckpt_shape.pt")
    # ---------------------------------------------------------------- configs
    for name, content in {"cfg_unknown": "trian: {}\n", "cfg_type": "train: {max_steps: lots}\n",
                          "cfg_range": "optim: {lr: -1}\n", "cfg_choice": "model: {name: wavenet}\n",
                          "cfg_list": "- a\n- b\n", "cfg_yaml": "model: [unclosed\n",
                          "cfg_hop": "audio: {hop_length: 0}\n", "cfg_window": "audio: {win_length: 4096}\n",
                          "cfg_good": yaml.safe_dump(tiny_config_dict())}.items():
        (d / f"{name}.yaml").write_text(content)
        put(name, d / f"{name}.yaml")
    (d / "cfg_latin1.yaml").write_bytes("model: {name: caf\xe9}\n".encode("latin-1"))
    put("cfg_latin1", d / "cfg_latin1.yaml")
    # ---------------------------------------------------------------- corpora
    for name, metadata in {"dup": "A|one.|one.\nA|two.|two.\n", "cols": "A|one.|one.|x|y\n",
                           "noid": "|one.|one.\n", "half_speakers": "A|one.|one.|awb\nB|two.|two.\n"}.items():
        (d / f"corpus_{name}").mkdir()
        (d / f"corpus_{name}" / "metadata.csv").write_text(metadata)
        put(f"corpus_{name}", d / f"corpus_{name}")
    (d / "corpus_latin1").mkdir()
    (d / "corpus_latin1" / "metadata.csv").write_bytes("A|caf\xe9.|caf\xe9.\n".encode("latin-1"))
    put("corpus_latin1", d / "corpus_latin1")
    (d / "corpus_nofeatures").mkdir()
    (d / "corpus_nofeatures" / "metadata.csv").write_text("A|one.|one.\n")
    put("corpus_nofeatures", d / "corpus_nofeatures")
    for name, metadata in {"empty": "", "blank": "\n  \n\n", "slash": "spk1/utt1|one.|one.\n"}.items():
        (d / f"corpus_{name}").mkdir()
        (d / f"corpus_{name}" / "metadata.csv").write_text(metadata)
        put(f"corpus_{name}", d / f"corpus_{name}")
    shutil.copy(f["ckpt"], d / "training_copy.pt")
    put("training_copy", d / "training_copy.pt")
    (d / "notexp").mkdir()
    put("notexp", d / "notexp")
    return f


def fill(argv: list[str], files: dict[str, str], out: Path) -> list[str]:
    """Substitute ``{name}`` with a file of the fixture and a leading OUT with this case's output path."""
    filled = []
    for arg in argv:
        arg = str(out) + arg[len(OUT):] if arg.startswith(OUT) else arg
        for name, path in files.items():
            arg = arg.replace("{" + name + "}", path)
        filled.append(arg)
    return filled


C = "{ckpt}"
#: broken checkpoints given to synthesize, as "fixture | message"
CHECKPOINT_CASES = """
missing          | does not exist
dir              | (it is a folder)
ckpt_text        | not a readable checkpoint
ckpt_truncated   | not a readable checkpoint
ckpt_foreign     | not a checkpoint of this toolkit
ckpt_step        | its step is 'abc'
ckpt_config      | incompatible version
ckpt_version     | checkpoint version 99
ckpt_symbols     | malformed symbol inventory
ckpt_model       | not a mapping of tensors
ckpt_nan         | NaN or infinite weights
ckpt_shape       | does not match this code's tacotron2
"""
#: the inference flags every command that decodes takes (tts.commands.options.add_inference), as
#: "flags | message": each is tried on synthesize, evaluate and plot-alignment
INFERENCE_FLAG_CASES = """
--batch-size 0                   | must be at least 1, got 0
--max-steps 0                    | argument --max-steps: must be at least 1, got 0
--max-steps -5                   | must be at least 1, got -5
--max-steps many                 | argument --max-steps: must be at least 1, got 'many'
--gl-iters -3                    | argument --gl-iters: must be at least 1, got -3
--attention-window=-3,-3         | wants two integers of 0 or more
--attention-window 3             | wants two integers separated by a comma
--attention-window a,b           | wants two integers
--stop-threshold -1              | argument --stop-threshold: must be a probability from 0 to 1, got -1
--max-frames-per-token 0         | must be a finite number above 0, got 0
--stop-threshold 2               | must be a probability from 0 to 1, got 2
inference.stop_threshold=2       | 'inference.stop_threshold' must be >= 0 and <= 1, got 2
--stop-threshold nan             | must be a probability from 0 to 1, got nan
"""
INFERENCE_COMMANDS = {"synthesize": ["synthesize", "--checkpoint", C, "--text", "Hi.", "--out", OUT],
                      "evaluate": ["evaluate", "--checkpoint", C, "--data", "{corpus}", "--out", OUT],
                      "plot-alignment": ["plot-alignment", "--checkpoint", C, "--text", "Hi.", "--out", OUT + ".png"]}
#: what `vocode` and `resynth` share: the wav they write, Griffin-Lim's iterations and the audio config
STANDALONE_VOCODER_CASES: list[tuple[str, list[str], str]] = [
    ("no extension", ["-o", "{dir}/noext"], "give a file name ending in .wav"),
    ("into a folder", ["-o", "{dir}"], "give a file name ending in .wav"),
    ("unwritable", ["-o", "/proc/tts-test/x.wav"], "cannot write /proc/tts-test/x.wav"),
    ("zero iterations", ["-o", OUT + ".wav", "--iters", "0"], "argument --iters: must be at least 1, got 0"),
    ("negative iterations", ["-o", OUT + ".wav", "--iters", "-3"], "must be at least 1, got -3"),
    ("config unknown key", ["-o", OUT + ".wav", "--config", "{cfg_unknown}"], "unknown config key 'trian'"),
    ("config missing", ["-o", OUT + ".wav", "--config", "{missing}"], "does not exist"),
    ("config YAML", ["-o", OUT + ".wav", "--config", "{cfg_yaml}"], "is not valid YAML"),
    ("config list", ["-o", OUT + ".wav", "--config", "{cfg_list}"], "must hold a mapping"),
    ("config latin-1", ["-o", OUT + ".wav", "--config", "{cfg_latin1}"], "is not UTF-8 text"),
    ("config hop 0", ["-o", OUT + ".wav", "--config", "{cfg_hop}"], "'audio.hop_length' must be >= 1"),
    ("config window", ["-o", OUT + ".wav", "--config", "{cfg_window}"],
     "'audio.win_length' (4096) must not exceed n_fft (1024)"),
]
CASES: list[tuple[str, list[str], str]] = [
    # ---------------------------------------------------------------- usage
    ("no command", [], "the following arguments are required: command"),
    ("unknown command", ["speak"], "invalid choice: 'speak'"),
    ("unknown option", ["g2p", "hi", "--loud"], "unrecognized arguments: --loud"),
    # ---------------------------------------------------------------- g2p
    ("g2p empty", ["g2p", ""], "text is empty"),
    ("g2p blank", ["g2p", "   "], "text is empty"),
    ("g2p only symbols", ["g2p", "?!?"], "nothing to speak after normalization"),
    ("g2p only brackets", ["g2p", "([{}])"], "nothing to speak"),
    ("g2p bad arpabet", ["g2p", "{XX YY}"], "unknown ARPAbet symbol(s) XX, YY"),
    ("g2p bad mode", ["g2p", "hi", "--mode", "ipa"], "invalid choice: 'ipa'"),
    # ---------------------------------------------------------------- vocode
    ("vocode missing", ["vocode", "{missing}", "-o", OUT + ".wav"], "not a readable .npy mel file"),
    ("vocode zero bytes", ["vocode", "{mel_zero}", "-o", OUT + ".wav"], "not a readable .npy mel file"),
    ("vocode strings", ["vocode", "{mel_strings}", "-o", OUT + ".wav"], "holds <U1 values, not numbers"),
    ("vocode pickled objects", ["vocode", "{mel_object}", "-o", OUT + ".wav"], "not a readable .npy mel file"),
    ("vocode NaN", ["vocode", "{mel_nan}", "-o", OUT + ".wav"], "NaN or infinite values"),
    ("vocode inf", ["vocode", "{mel_inf}", "-o", OUT + ".wav"], "NaN or infinite values"),
    ("vocode 1e30", ["vocode", "{mel_huge}", "-o", OUT + ".wav"], "far above any natural-log mel"),
    ("vocode wrong bands", ["vocode", "{mel_bands}", "-o", OUT + ".wav"], "expected a (n_mels=80, T_mel) array"),
    ("vocode 1-D", ["vocode", "{mel_1d}", "-o", OUT + ".wav"], "expected a (n_mels=80, T_mel) array"),
    ("vocode 3-D", ["vocode", "{mel_3d}", "-o", OUT + ".wav"], "expected a (n_mels=80, T_mel) array"),
    ("vocode one frame", ["vocode", "{mel_one_frame}", "-o", OUT + ".wav"], "the mel has 1 frame"),
    ("vocode npz of two arrays", ["vocode", "{mel_two_npz}", "-o", OUT + ".wav"],
     "an .npz archive of 2 arrays (mel, other)"),
    ("vocode empty mel", ["vocode", "{mel_empty}", "-o", OUT + ".wav"], "the mel is empty"),
    # ---------------------------------------------------------------- resynth
    ("resynth missing", ["resynth", "{missing}", "-o", OUT + ".wav"], "no such audio file"),
    ("resynth zero bytes", ["resynth", "{zero_wav}", "-o", OUT + ".wav"], "file is empty, not audio"),
    ("resynth text", ["resynth", "{text_wav}", "-o", OUT + ".wav"], "not a readable audio file"),
    ("resynth one sample", ["resynth", "{one_sample_wav}", "-o", OUT + ".wav"], "shorter than one analysis window"),
    ("resynth 10 ms", ["resynth", "{short_wav}", "-o", OUT + ".wav"], "shorter than one analysis window"),
    ("resynth NaN samples", ["resynth", "{nan_wav}", "-o", OUT + ".wav"], "NaN or infinite samples"),
    ("resynth inf samples", ["resynth", "{inf_wav}", "-o", OUT + ".wav"], "NaN or infinite samples"),
    ("resynth over its input", ["resynth", "{good_wav}", "-o", "{good_wav}"], "is the input"),
    ("resynth a folder", ["resynth", "{dir}", "-o", OUT + ".wav"], "no such audio file"),
    *[(f"{command} {name}", [command, source, *argv], message)
      for command, source in (("vocode", "{mel_good}"), ("resynth", "{good_wav}"))
      for name, argv, message in STANDALONE_VOCODER_CASES],
    # ---------------------------------------------------------------- synthesize: checkpoints
    *[(f"synthesize checkpoint {fixture.strip()}",
       ["synthesize", "--checkpoint", "{" + fixture.strip() + "}", "--text", "Hi.", "--out", OUT], message.strip())
      for fixture, message in (line.split(" | ") for line in CHECKPOINT_CASES.strip().splitlines())],
    # ---------------------------------------------------------------- synthesize: text and options
    ("synthesize empty text", ["synthesize", "--checkpoint", C, "--text", "", "--out", OUT], "text is empty"),
    ("synthesize speaker of one voice", ["synthesize", "--checkpoint", C, "--speaker", "awb", "--text", "Hi.",
                                         "--out", OUT], "this voice has one speaker: drop the speaker ('awb')"),
    ("synthesize symbols only", ["synthesize", "--checkpoint", C, "--text", "?!", "--out", OUT],
     "nothing to speak after normalization"),
    ("synthesize empty file", ["synthesize", "--checkpoint", C, "--text-file", "{empty_txt}", "--out", OUT], "has no text"),
    ("synthesize blank file", ["synthesize", "--checkpoint", C, "--text-file", "{blank_txt}", "--out", OUT], "has no text"),
    ("synthesize symbol lines", ["synthesize", "--checkpoint", C, "--text-file", "{symbols_txt}", "--out", OUT],
     "no line could be turned into tokens"),
    ("synthesize text file missing", ["synthesize", "--checkpoint", C, "--text-file", "{missing}", "--out", OUT],
     "does not exist"),
    ("synthesize out cannot be made", ["synthesize", "--checkpoint", C, "--text", "Hi.", "--out", "/proc/tts-test/out"],
     "cannot write in /proc"),
    ("evaluate out cannot be made",
     ["evaluate", "--checkpoint", C, "--data", "{corpus}", "--out", "/proc/tts-test/e", "--no-asr"],
     "cannot write in /proc"),
    ("synthesize binary text file", ["synthesize", "--checkpoint", C, "--text-file", "{binary_txt}", "--out", OUT],
     "is not text (binary data"),
    ("synthesize text file folder", ["synthesize", "--checkpoint", C, "--text-file", "{dir}", "--out", OUT], "is a folder"),
    ("synthesize no text", ["synthesize", "--checkpoint", C, "--out", OUT],
     "one of the arguments --text --text-file --split is required"),
    ("synthesize two texts one wav",
     ["synthesize", "--checkpoint", C, "--text-file", "{symbols_txt}", "--out", "{dir}/one.wav"],
     "names one wav but there are 3 texts"),
    ("synthesize out extension", ["synthesize", "--checkpoint", C, "--text", "Hi.", "--out", "{dir}/x.mp3"],
     "give a folder, or a file name ending in .wav"),
    ("synthesize out is a file", ["synthesize", "--checkpoint", C, "--text", "Hi.", "--out", "{good_wav}/x"],
     "exists and is not a folder"),
    ("synthesize int8 on cuda",
     ["synthesize", "--checkpoint", C, "--text", "Hi.", "--out", OUT, "--int8", "--device", "cuda"],
     "int8 inference runs on the CPU only"),
    ("synthesize split without data", ["synthesize", "--checkpoint", C, "--split", "test", "--out", OUT],
     "--split needs --data"),
    ("synthesize split unknown", ["synthesize", "--checkpoint", C, "--split", "dev", "--data", "{corpus}", "--out", OUT],
     "no split 'dev'"),
    ("synthesize split limit 0",
     ["synthesize", "--checkpoint", C, "--split", "test", "--data", "{corpus}", "--limit", "0", "--out", OUT],
     "argument --limit: must be at least 1, got 0"),
    *[(f"{command} {flags.strip()}", [*argv, *flags.split()], message.strip())
      for command, argv in INFERENCE_COMMANDS.items()
      for flags, message in (line.split(" | ") for line in INFERENCE_FLAG_CASES.strip().splitlines())
      if not (command == "plot-alignment" and flags.startswith("--batch-size"))],
    # ---------------------------------------------------------------- evaluate
    ("evaluate no data or suite", ["evaluate", "--checkpoint", C, "--out", OUT], "give --data"),
    ("evaluate missing corpus", ["evaluate", "--checkpoint", C, "--data", "{missing}", "--out", OUT, "--no-asr"],
     "no corpus at"),
    ("evaluate unknown split",
     ["evaluate", "--checkpoint", C, "--data", "{corpus}", "--split", "dev", "--out", OUT, "--no-asr"],
     "no split 'dev'"),
    ("evaluate limit 0", ["evaluate", "--checkpoint", C, "--data", "{corpus}", "--limit", "0", "--out", OUT],
     "argument --limit: must be at least 1, got 0"),
    ("evaluate unknown suite", ["evaluate", "--checkpoint", C, "--suite", "nightmare", "--out", OUT],
     "no suite 'nightmare' (suites: report, robustness)"),
    ("evaluate bad checkpoint", ["evaluate", "--checkpoint", "{ckpt_nan}", "--data", "{corpus}", "--out", OUT],
     "NaN or infinite weights"),
    ("evaluate duplicate ids", ["evaluate", "--checkpoint", C, "--data", "{corpus_dup}", "--out", OUT, "--no-asr"],
     "id A was already used on line 1"),
    ("evaluate batch size", ["evaluate", "--checkpoint", C, "--data", "{corpus}", "--out", OUT, "--batch-size", "-1"],
     "must be at least 1"),
    # ---------------------------------------------------------------- validate
    ("validate missing corpus", ["validate", "--checkpoint", C, "--data", "{missing}"], "no corpus at"),
    ("validate no features", ["validate", "--checkpoint", C, "--data", "{corpus_nofeatures}"], "no features in"),
    ("validate unknown split", ["validate", "--checkpoint", C, "--data", "{corpus}", "--split", "dev"], "no split 'dev'"),
    ("validate asr -1", ["validate", "--checkpoint", C, "--data", "{corpus}", "--asr", "-1"],
     "argument --asr: must be 0 or more, got -1"),
    ("validate limit 0", ["validate", "--checkpoint", C, "--data", "{corpus}", "--limit", "0"],
     "argument --limit: must be at least 1, got 0"),
    ("validate bad checkpoint", ["validate", "--checkpoint", "{ckpt_text}", "--data", "{corpus}"],
     "not a readable checkpoint"),
    # ---------------------------------------------------------------- plot-alignment
    ("plot neither text nor utterance", ["plot-alignment", "--checkpoint", C, "--out", OUT + ".png"],
     "give either --text or --utterance"),
    ("plot utterance without data", ["plot-alignment", "--checkpoint", C, "--utterance", "TINY-0008", "--out", OUT + ".png"],
     "--utterance needs --data"),
    ("plot unknown utterance",
     ["plot-alignment", "--checkpoint", C, "--utterance", "NOPE", "--data", "{corpus}", "--out", OUT + ".png"],
     "NOPE is not in the 'val' split"),
    ("plot out not png", ["plot-alignment", "--checkpoint", C, "--text", "Hi.", "--out", "{dir}/x.jpg"],
     "give a file name ending in .png"),
    ("plot heads of tacotron2",
     ["plot-alignment", "--checkpoint", C, "--text", "Hi.", "--all-heads", "--out", OUT + ".png",
      "--max-frames-per-token", "2"],
     "single-attention model"),
    ("plot bad head", ["plot-alignment", "--checkpoint", C, "--text", "Hi.", "--head", "x", "--out", OUT + ".png"],
     "argument --head: wants two integers"),
    # ---------------------------------------------------------------- features and train
    ("features missing corpus", ["features", "--data", "{missing}"], "no corpus at"),
    ("features empty corpus", ["features", "--data", "{corpus_empty}", "--jobs", "1"], "holds no utterance"),
    ("features blank corpus", ["features", "--data", "{corpus_blank}", "--jobs", "1"], "holds no utterance"),
    ("features id with a slash", ["features", "--data", "{corpus_slash}", "--jobs", "1"],
     "id 'spk1/utt1' is not a plain file name"),
    ("features duplicate ids", ["features", "--data", "{corpus_dup}", "--jobs", "1"], "id A was already used on line 1"),
    ("features extra columns", ["features", "--data", "{corpus_cols}", "--jobs", "1"], "got 5 field(s)"),
    ("features speaker on some lines", ["features", "--data", "{corpus_half_speakers}", "--jobs", "1"],
     "metadata.csv:2: no speaker field, where line 1 names one"),
    ("features no id", ["features", "--data", "{corpus_noid}", "--jobs", "1"], "expected 'id|text|normalized text'"),
    ("features latin-1 metadata", ["features", "--data", "{corpus_latin1}", "--jobs", "1"], "not UTF-8 text"),
    ("features jobs 0", ["features", "--data", "{corpus}", "--jobs", "0"], "must be at least 1, got 0"),
    ("features bad override", ["features", "--data", "{corpus}", "audio.n_mels=0"], "'audio.n_mels' must be >= 1"),
    ("features override no equals", ["features", "--data", "{corpus}", "audio.n_mels"], "must look like key.path=value"),
    ("train unknown key", ["train", "--config", "{cfg_unknown}", "--data", "{corpus}", "--out", OUT],
     "unknown config key 'trian'"),
    ("train bad type", ["train", "--config", "{cfg_type}", "--data", "{corpus}", "--out", OUT],
     "'train.max_steps' must be int"),
    ("train negative lr", ["train", "--config", "{cfg_range}", "--data", "{corpus}", "--out", OUT],
     "'optim.lr' must be > 0, got -1"),
    ("train unknown model", ["train", "--config", "{cfg_choice}", "--data", "{corpus}", "--out", OUT],
     "'model.name' must be one of"),
    ("train no features", ["train", "--config", "{cfg_good}", "--data", "{corpus_nofeatures}", "--out", OUT],
     "no features in"),
    ("train checkpoint_every 0",
     [*TRAIN, "train.checkpoint_every=0"],
     "'train.checkpoint_every' must be >= 1"),
    ("train max_steps 1e30", [*TRAIN, "train.max_steps=1e30"],
     "'train.max_steps' must be int, got '1e30'"),
    ("train max_steps -1", [*TRAIN, "train.max_steps=-1"],
     "'train.max_steps' must be >= 1"),
    ("train fp16 on cpu",
     [*TRAIN, "--device", "cpu", "train.amp=fp16"],
     "train.amp=fp16 needs a GPU"),
    ("train resume from missing",
     [*TRAIN, "--resume-from", "{missing}"],
     "--resume-from"),
    ("train resume empty folder", [*TRAIN, "--resume"],
     "--resume: no checkpoint_*.pt"),
    ("train warm start missing",
     [*TRAIN, "train.warm_start={missing}"],
     "train.warm_start"),
    ("train into existing run", ["train", "--config", "{cfg_good}", "--data", "{corpus}", "--out", "{exp}"],
     "already holds checkpoints"),
    ("train unwritable out", ["train", "--config", "{cfg_good}", "--data", "{corpus}", "--out", "/proc/tts-test-exp"],
     "cannot write to the experiment folder"),
    # ---------------------------------------------------------------- study
    ("study no variants", [*STUDY, "--steps", "2"],
     "give the variants to compare"),
    ("study unknown kind",
     [*STUDY, "--steps", "2", "--kinds", "nope"],
     "'model.tacotron2.attention.kind' must be one of"),
    ("study missing corpus",
     ["study", "--config", "{cfg_good}", "--data", "{missing}", "--out", OUT, "--steps", "2", "--kinds", "forward"],
     "no corpus at"),
    ("study bad variant",
     [*STUDY, "--steps", "2", "--variant", "a b:x=1"],
     "NAME or NAME:key=value"),
    ("study steps below the curve interval",
     [*STUDY, "--steps", "200", "--kinds", "forward"],
     "--steps 200 is not a multiple of --curve-every 500"),
    ("study seed twice", [*STUDY, "--steps", "2", "--kinds", "forward", "--seeds", "1", "1"], "give each seed once"),
    ("study seed 0", [*STUDY, "--steps", "2", "--kinds", "forward", "--seeds", "0"], "must be at least 1"),
    ("study steps 0",
     [*STUDY, "--steps", "0", "--kinds", "forward"],
     "must be at least 1"),
    # ---------------------------------------------------------------- export and report
    ("export to a folder", ["export", C, "--out", "{dir}"], "give a file name ending in .pt"),
    ("export no extension", ["export", C, "--out", "{dir}/release"], "give a file name ending in .pt"),
    ("export missing", ["export", "{missing}", "--out", OUT + ".pt"], "does not exist"),
    ("export NaN checkpoint", ["export", "{ckpt_step}", "--out", OUT + ".pt"], "its step is 'abc'"),
    ("export over its source", ["export", C, "--out", C], "is the input"),
    ("export settings only", ["export", "inference.attention_window=[1,2]", "--out", OUT + ".pt"],
     "give the checkpoint to export"),
    ("export average to onnx", ["export", C, C, "--format", "onnx", "--out", "{dir}/onnx"],
     "--format onnx exports one checkpoint"),
    ("export over a training checkpoint", ["export", C, "--out", "{training_copy}"],
     "is a training checkpoint (it can be resumed)"),
    ("export unwritable", ["export", C, "--out", "/proc/tts-test/release.pt"], "cannot write /proc/tts-test/release.pt"),
    ("export bad setting", ["export", C, "inference.attention_window=[1]", "--out", OUT + ".pt"],
     "'inference.attention_window' must hold 2 values"),
    ("export training setting", ["export", C, "train.max_steps=3", "--out", OUT + ".pt"], "only inference.* settings"),
    ("report not an experiment", ["report", "{notexp}"], "is not an experiment folder"),
    ("report missing folder", ["report", "{missing}"], "is not an experiment folder"),
    # ---------------------------------------------------------------- bench
    ("bench unknown", ["bench", "speed"], "invalid choice: 'speed'"),
    ("bench seconds nan", ["bench", "griffin-lim", "--seconds", "nan"],
     "argument --seconds: must be a finite number above 0, got nan"),
    ("bench seconds 0", ["bench", "vocoder", "--seconds", "0"], "must be a finite number above 0, got 0"),
    ("bench threads 0", ["bench", "griffin-lim", "--threads", "0"], "must be at least 1"),
    ("bench spread negative", ["bench", "serve", "--spread", "-1"], "must be a finite number of 0 or more, got -1"),
    ("serve batch size 0", ["serve", "--batch-size", "0"], "argument --batch-size: must be at least 1, got 0"),
    ("synthesize threads 0", ["synthesize", "--text", "Hi.", "--out", OUT, "--threads", "0"], "must be at least 1"),
    ("bench steps 0", ["bench", "attention", "--max-steps", "0"], "must be at least 1"),
    ("bench bad config", ["bench", "model", "--config", "{cfg_range}"], "'optim.lr' must be > 0"),
]


def run(argv: list[str], capsys) -> tuple[int | str | None, str]:
    code: int | str | None
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    return code, capsys.readouterr().err


def test_there_are_at_least_a_hundred_cases():
    assert len(CASES) >= 100 and len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize("name, argv, message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_line(name, argv, message, files, tmp_path, capsys):
    out = tmp_path / "out"
    before = set(Path(files["dir"]).iterdir())
    code, err = run(fill(argv, files, out), capsys)
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("INFO", "WARNING"))]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert message in lines[0], lines[0]
    assert not list(tmp_path.glob("out*")), "partial output left behind"
    assert set(Path(files["dir"]).iterdir()) == before, "something was written next to the inputs"


@pytest.mark.parametrize("argv, message", [
    (["resynth", "{nan_wav}", "-o", OUT + ".wav"], "NaN or infinite samples"),
    (["synthesize", "--checkpoint", "{ckpt_nan}", "--text", "Hi.", "--out", OUT], "NaN or infinite weights"),
    (["train", "--config", "{cfg_range}", "--data", "{corpus}", "--out", OUT], "'optim.lr' must be > 0"),
])
def test_as_a_real_process(argv, message, files, tmp_path):
    out = subprocess.run([sys.executable, "-m", "tts.cli", *fill(argv, files, tmp_path / "out")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("error: ") and message in out.stderr


@pytest.mark.parametrize("text", ["A", "I", "x", "1 2 3 4 5 6 7 8 9", "9" * 1000, " ".join(["again"] * 50),
                                  "((((nested [brackets) ] {", "Москва and Tokyo 東京", "tab\there\x1b[31mred\x1b[0m",
                                  "\u200b\u200bzero width", "$$$ 100 %%%"])
def test_strange_text_is_speech_or_one_line_never_a_traceback(text, files, tmp_path, capsys):
    code, err = run(["synthesize", "--checkpoint", files["ckpt"], "--text", text, "--out", str(tmp_path / "x.wav"),
                     "--max-frames-per-token", "2", "--gl-iters", "2", "--no-plots"], capsys)
    assert code in (0, 2) and "Traceback" not in err
    if code == 0:
        assert (tmp_path / "x.wav").stat().st_size > 44
    else:
        assert err.strip().splitlines()[-1].startswith("error: ")
