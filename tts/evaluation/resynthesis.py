"""Recordings resynthesized through one or more vocoders (recording →
mel → vocoder → wav), side by side, against the recordings themselves.

Per utterance and vocoder: DNSMOS (P.808, P.835 SIG/BAK/OVRL), wideband PESQ and STOI against
the recording, MCD, WER/CER of the recognizer and the real-time factor; for the recordings their
own DNSMOS and WER/CER, the ceiling any vocoder is measured against. Writes ``summary.json``,
``utterances.{json,csv,md}`` and each vocoder's wavs under ``out/<vocoder>/``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts.audio import MelSpectrogram, edge_silence, load_wav, save_wav
from tts.config import AudioConfig
from tts.data.corpus import read_metadata, read_split
from tts.errors import TTSError
from tts.evaluation.scoring import Meters, mean_of, rounded, write_tables
from tts.metrics import ErrorCounts, error_counts, mel_cepstral_distortion
from tts.metrics.quality import resynthesis_quality
from tts.vocoder_loader import vocoder_for
from tts.vocoders import Vocoder
from tts.vocoders.catalogue import resolve, short_names


def _load_vocoders(options: list[str], audio: AudioConfig, device: str) -> tuple[AudioConfig, dict[str, Vocoder]]:
    """The vocoders by name, and the audio settings their mels are made with: the neural vocoders'
    (which must agree), else ``audio``."""
    neural = {o: vocoder_for(o, device) for o in options if resolve(o).neural}
    if neural:
        first, *others = neural.items()
        for option, vocoder in others:
            vocoder.check_compatible(first[1].audio, f"--vocoder {first[0]}")
        audio = first[1].audio
    vocoders = {}
    for name, option in zip(short_names(options), options):
        vocoders[name] = neural[option] if option in neural else vocoder_for(option, device, audio)
    return audio, vocoders


def _vocode(vocoder: Vocoder, mel: torch.Tensor) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    wav, lengths = vocoder(mel[None])
    wav = wav[0, : int(lengths[0])].cpu().numpy()
    return wav, time.perf_counter() - start


def evaluate_vocoders(options: list[str], data_root: str | Path, out: str | Path, split: str = "test",
                      limit: int | None = None, audio: AudioConfig | None = None, use_asr: bool = True,
                      use_mos: bool = True, device: str = "cpu", progress: bool = True) -> dict:
    """Resynthesize ``split``'s recordings (its first ``limit``) through every vocoder of
    ``options`` (``griffin-lim`` or vocoder checkpoints); returns the summary written to
    ``out/summary.json``."""
    from tqdm import tqdm

    if not options:
        raise TTSError("give at least one --vocoder (griffin-lim or a vocoder checkpoint)")
    audio, vocoders = _load_vocoders(options, audio or AudioConfig(), device)
    metadata = {u.id: u for u in read_metadata(data_root)}
    utterances = [metadata[i] for i in read_split(data_root, split)[:limit] if i in metadata]
    if not utterances:
        raise TTSError(f"split '{split}' of {data_root} has no utterances in metadata.csv")
    out = Path(out)
    meters = Meters.create(use_asr, use_mos)
    mel_fn = MelSpectrogram(audio).to(device)
    rows: list[dict] = []
    counts = {name: ErrorCounts() for name in ["recording", *vocoders]}
    with torch.no_grad():
        for utt in tqdm(utterances, desc="evaluate vocoders", unit="utt", disable=not progress):
            recording = edge_silence(load_wav(utt.wav_path(data_root), audio.sample_rate)[0], audio)
            mel = mel_fn(torch.from_numpy(recording).to(device))
            row: dict = {"id": utt.id, "seconds": round(len(recording) / audio.sample_rate, 3)}
            wavs = {"recording": recording}
            for name, vocoder in vocoders.items():
                wav, seconds = _vocode(vocoder, mel)
                save_wav(out / name / f"{utt.id}.wav", wav, audio.sample_rate)
                wavs[name] = wav
                quality = resynthesis_quality(wav, recording, audio.sample_rate)
                resynthesized_mel = mel_fn(torch.from_numpy(wav).to(device)).cpu().numpy()
                row.update({f"{name}_pesq": rounded(quality.pesq, 3), f"{name}_stoi": rounded(quality.stoi, 4),
                            f"{name}_mcd_db": round(mel_cepstral_distortion(resynthesized_mel, mel.cpu().numpy()), 3),
                            f"{name}_rtf": round(seconds / max(len(wav) / audio.sample_rate, 1e-9), 4)})
            for name, wav in wavs.items():
                if meters.mos is not None:
                    row.update({f"{name}_dnsmos_{k}": round(v, 3)
                                for k, v in vars(meters.mos(wav, audio.sample_rate)).items()})
                if meters.recognizer is not None:
                    errors = error_counts(utt.normalized, meters.recognizer(wav, audio.sample_rate))
                    counts[name] = counts[name] + errors
                    row[f"{name}_wer"] = round(errors.wer, 4)
            row["text"] = utt.normalized
            rows.append(row)
    summary: dict[str, Any] = {"split": split, "utterances": len(rows), "sample_rate": audio.sample_rate,
               "vocoders": dict(zip(vocoders, options))}
    for name in counts:
        means = {key[len(name) + 1:]: mean_of(rows, key, 4)
                 for key in rows[0] if key.startswith(f"{name}_") and key != f"{name}_wer"}
        if meters.recognizer is not None:
            means.update(wer=round(counts[name].wer, 4), cer=round(counts[name].cer, 4))
        summary[name] = means
    for name in vocoders:  # how far each vocoder is from the recordings
        gaps = {f"{key}_minus_recording": round(summary[name][key] - summary["recording"][key], 4)
                for key in ("dnsmos_p808", "wer") if summary[name].get(key) is not None}
        summary[name].update(gaps)
    show = ["id", "seconds", *(f"{n}_dnsmos_p808" for n in counts), *(f"{n}_pesq" for n in vocoders),
            *(f"{n}_wer" for n in counts), "text"]
    write_tables(rows, summary, out, show)
    return summary
