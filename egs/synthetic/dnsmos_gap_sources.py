"""Where does the DNSMOS gap to the reference voice come from: the decoding (free-running error)
or the texture of the predicted frames? The model's mels are scored teacher-forced (each step
fed the recording's previous frames, so no free-running error), before and after the postnet,
against the recordings' own mels, all through the same Griffin-Lim; free-running mels of the same
texts give the texture statistics without a frame-by-frame match.

    python egs/synthetic/dnsmos_gap_sources.py [--checkpoint CKPT] [--data data/synthetic]
        [--split val] [--limit 48] [--out out/dnsmos_gap_sources.json]

Per source: DNSMOS P.808 mean, its gap to the recordings' mels (paired, ± standard error), the
mean absolute frame-to-frame change of the log-mel and the mean per-band standard deviation over
time (over-smoothed mels score low on both). Results: tts/pretrained/MODEL_CARD.md, "Why the
adversarial postnet".
"""

from __future__ import annotations

import numpy as np
import torch
from mel_scoring import P808, script_arguments, write_result
from tqdm import tqdm

from tts import checkpoint
from tts.config import DataConfig
from tts.data import FeatureDataset, batch_loader, feature_dir
from tts.data.corpus import read_metadata
from tts.synthesis import Synthesizer


def texture(mel: np.ndarray) -> tuple[float, float]:
    """Mean |frame-to-frame change| and mean per-band standard deviation of a log-mel (n_mels, T_mel)."""
    return float(np.abs(np.diff(mel, axis=1)).mean()), float(mel.std(axis=1).mean())


def summarize(scores: np.ndarray, reference: np.ndarray, textures: list[tuple[float, float]]) -> dict[str, float | None]:
    """``scores``, ``reference``: DNSMOS per utterance ``(N,)`` (reference may be empty: no pairing)."""
    summary: dict[str, float | None] = {"dnsmos_p808": round(float(scores.mean()), 3)}
    if len(reference):
        gap = reference - scores
        summary["gap"] = round(float(gap.mean()), 3)
        summary["gap_standard_error"] = round(float(gap.std(ddof=1) / np.sqrt(len(gap))), 3) if len(gap) > 1 else None
    change, band_std = np.mean(textures, axis=0)
    summary |= {"frame_change": round(float(change), 3), "band_std": round(float(band_std), 3)}
    return summary


def main() -> None:
    args = script_arguments(__doc__, "val", 48, "out/dnsmos_gap_sources.json")

    synthesizer = Synthesizer.from_checkpoint(args.checkpoint)
    loaded = checkpoint.load(args.checkpoint)
    model, config = loaded.model.eval(), loaded.config
    dataset = FeatureDataset(feature_dir(args.data, config.audio, config.text), args.data, args.split)
    loader = batch_loader(dataset, DataConfig(max_batch_size=8, num_workers=0), model.reduction_factor,
                          max_frames=4000, seed=0, shuffle=False)
    metadata = {u.id: u for u in read_metadata(args.data)}
    p808 = P808(synthesizer)

    sources = ("recordings", "teacher_forced_postnet", "teacher_forced_before_postnet")
    scores: dict[str, list[float]] = {k: [] for k in sources}
    textures: dict[str, list[tuple[float, float]]] = {k: [] for k in (*sources, "free_running")}
    texts: list[str] = []
    bar = tqdm(total=min(args.limit, len(dataset)), desc="teacher-forced", unit="utt")
    with torch.no_grad():
        for batch in loader:
            output = model(batch)
            for i in range(len(batch.utterance_ids)):
                if len(texts) == args.limit:
                    break
                n = int(batch.mel_lengths[i])
                mels = {"recordings": batch.mels[i, :, :n], "teacher_forced_postnet": output.mel_after[i, :, :n],
                        "teacher_forced_before_postnet": output.mel_before[i, :, :n]}
                for name, mel in mels.items():
                    scores[name].append(p808(mel.numpy()))
                    textures[name].append(texture(mel.numpy()))
                texts.append(metadata[batch.utterance_ids[i]].normalized)
                bar.update()
            if len(texts) == args.limit:
                break
    bar.close()
    batch_size = synthesizer.settings.batch_size
    for start in tqdm(range(0, len(texts), batch_size), desc="free-running", unit="batch"):
        textures["free_running"] += [texture(r.mel) for r in synthesizer(texts[start:start + batch_size])]

    recordings = np.array(scores["recordings"])
    summary = {name: summarize(np.array(scores[name]), recordings if name != "recordings" else np.array([]),
                               textures[name]) for name in sources}
    change, band_std = np.mean(textures["free_running"], axis=0)
    summary["free_running"] = {"frame_change": round(float(change), 3), "band_std": round(float(band_std), 3)}
    write_result(args.out, {"split": args.split, "utterances": len(texts), "sources": summary}, summary)


if __name__ == "__main__":
    main()
