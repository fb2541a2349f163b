"""Where does a voice lose the words it misreads: in the frames it predicts, or in feeding itself
its own frames? (issue #61, item 2)

Each text of the robustness suite's everyday held-out category is heard four ways, through the
voice's default vocoder and Whisper, paired per sentence:

* ``reference``: Festival's recording of the text (the reference voice, its mel);
* ``teacher_forced``: the voice's postnet mels with the recording's frames as its decoder input;
* ``own_inputs``: the same, with the voice's own teacher-forced predictions (before the postnet)
  as its decoder input instead: one step of its own error at every step, the attention still
  driven by the text;
* ``free_running``: the voice synthesizing the text on its own (as ``tts evaluate`` does).

If teacher-forced frames read like the recording but the voice's own inputs do not, the model
relies on exact previous frames (exposure bias) more than it lacks what the frames should be:

    .venv/bin/python egs/synthetic/exposure_wer.py [--checkpoint CKPT] [--limit 100] \\
        [--ways free_running] [--baseline OTHER.json] --out docs/everyday_voice/exposure_wer.json

One thread, about 8 s a sentence with every way; writes the per-sentence transcripts and the WER of
each way with every way's paired difference to the reference (± standard error), and with
``--baseline`` (another voice's output of this script) to that voice's same way, sentence by
sentence: the figure that chooses between two voices. ``--ways`` hears only those ways (the
reference is always heard).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from tts.audio import MelSpectrogram, edge_silence
from tts.data import Batch
from tts.data.engines import speak
from tts.devices import cpu_instructions, describe_device
from tts.errors import TTSError, report_to_user
from tts.evaluation.robustness import load_suite
from tts.metrics.asr import Recognizer, error_counts
from tts.models.decoding import AutoregressiveTTS
from tts.synthesis import Synthesizer
from tts.text.normalize import normalize_text

WAYS = ("reference", "teacher_forced", "own_inputs", "free_running")


def teacher_forced_mels(synthesizer: Synthesizer, text: str, mel: torch.Tensor, uid: str) -> tuple[np.ndarray,
                                                                                                    np.ndarray]:
    """The postnet mels ``(n_mels, T_mel)`` of ``text`` with the recording's mel ``(n_mels, T_mel)``
    as the decoder's input, and with the voice's own teacher-forced predictions as its input."""
    model, frames = synthesizer.model, mel.shape[1]
    if not isinstance(model, AutoregressiveTTS):
        raise TTSError("teacher forcing needs a PyTorch checkpoint, not an ONNX export")
    ids = torch.tensor([synthesizer.tokenizer.encode_verbose(text).ids])
    t_mel = frames + (-frames) % model.reduction_factor
    silence = float(mel.min())

    def batch(inputs: torch.Tensor) -> Batch:
        padded = torch.full((1, mel.shape[0], t_mel), silence)
        padded[0, :, :frames] = inputs
        stop = (torch.arange(t_mel)[None] >= frames - 1).float()
        return Batch(ids, torch.tensor([ids.shape[1]]), padded, torch.tensor([frames]), stop, [uid])

    with torch.no_grad():
        forced = model(batch(mel))
        own = model(batch(forced.mel_before[0, :, :frames].float()))
    return forced.mel_after[0, :, :frames].float().numpy(), own.mel_after[0, :, :frames].float().numpy()


def paired(rows: list[dict], way: str, others: list[dict] | None = None, other_way: str = "reference") -> list[float]:
    """Mean per-sentence WER of ``way`` minus ``other_way``'s (of the same rows, or of the rows of
    ``others``, matched by text) and its standard error."""
    by_text = {r["text"]: r for r in (others or rows)}
    d = np.array([(r[f"{way}_word_errors"] - by_text[r["text"]][f"{other_way}_word_errors"]) / r["words"]
                  for r in rows])
    return [round(float(d.mean()), 4), round(float(d.std(ddof=1) / np.sqrt(len(d))), 4)]


def baseline_rows(path: str, texts: list[str], ways: list[str]) -> list[dict]:
    """The rows of another run of this script, checked to hold every text and way of this one."""
    try:
        rows = json.loads(Path(path).read_text())["rows"]
    except (OSError, ValueError, KeyError) as e:
        raise TTSError(f"--baseline {path}: not an output of this script ({e})") from e
    missing = set(texts) - {r["text"] for r in rows}
    if missing or any(f"{w}_word_errors" not in r for r in rows for w in ways):
        raise TTSError(f"--baseline {path} lacks {len(missing)} of these texts or one of the ways {', '.join(ways)}: "
                       "run it with the same --limit and ways")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", help="the voice (default: the bundled one)")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--ways", nargs="+", choices=WAYS[1:], default=list(WAYS[1:]),
                        help="which of the voice's ways to hear (default: all three)")
    parser.add_argument("--baseline", help="another voice's output of this script, to pair each way with")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    ways = ["reference", *args.ways]
    torch.set_num_threads(1)
    texts = load_suite("robustness")["categories"]["everyday_heldout"][: args.limit]
    try:
        baseline = baseline_rows(args.baseline, texts, args.ways) if args.baseline else None
        synthesizer = Synthesizer.from_checkpoint(args.checkpoint)
    except TTSError as exc:
        return report_to_user(exc)
    audio = synthesizer.config.audio
    mel_of, hear = MelSpectrogram(audio), Recognizer(threads=1)
    rows, start = [], time.perf_counter()
    for i, text in enumerate(texts):
        recording = edge_silence(speak(normalize_text(text), "slt", audio.sample_rate), audio)
        mel = mel_of(torch.from_numpy(recording))
        waveforms = {"reference": synthesizer.vocode(mel.numpy())}
        if {"teacher_forced", "own_inputs"} & set(ways):
            forced, own = teacher_forced_mels(synthesizer, text, mel, f"everyday_heldout-{i + 1:02d}")
            waveforms |= {"teacher_forced": synthesizer.vocode(forced), "own_inputs": synthesizer.vocode(own)}
        if "free_running" in ways:
            waveforms["free_running"] = synthesizer([text])[0].waveform
        row: dict = {"text": text}
        for way in ways:
            heard = hear(waveforms[way], audio.sample_rate)
            counts = error_counts(text, heard)
            row.update({f"{way}_heard": heard, f"{way}_word_errors": counts.word_errors, "words": counts.words})
        rows.append(row)
        print(f"{i + 1}/{len(texts)} {time.perf_counter() - start:.0f} s "
              + " ".join(f"{w} {row[f'{w}_word_errors']}" for w in ways), flush=True)
    words = sum(r["words"] for r in rows)
    summary = {"checkpoint": args.checkpoint or "bundled", "sentences": len(rows), "date": time.strftime("%Y-%m-%d"),
               "cpu": f"{describe_device(torch.device('cpu'))}: {' '.join(cpu_instructions())}",
               "wer": {w: round(sum(r[f"{w}_word_errors"] for r in rows) / words, 4) for w in ways},
               "minus_reference": {w: paired(rows, w) for w in args.ways},
               "command": " ".join(["python egs/synthetic/exposure_wer.py"]
                                   + ([f"--checkpoint {args.checkpoint}"] if args.checkpoint else [])
                                   + [f"--limit {args.limit}"]
                                   + ([f"--ways {' '.join(args.ways)}"] if args.ways != list(WAYS[1:]) else [])
                                   + ([f"--baseline {args.baseline}"] if args.baseline else [])
                                   + [f"--out {args.out}"])}
    if baseline is not None:
        summary["baseline"] = args.baseline
        summary["minus_baseline"] = {w: paired(rows, w, baseline, w) for w in args.ways}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
