"""Text → wav with a trained checkpoint: ``Synthesizer.from_checkpoint(path)(texts)``.

Each text is split into sentences; all sentences of all texts are batched through the
acoustic model (each stops on its own), vocoded with Griffin-Lim, and joined per text with
short pauses. Every :class:`Result` carries the audio, the mel, the joined alignment (a
block diagonal over the sentences), the tokens, per-sentence attention reports and timings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from tts.analysis.metrics import AttentionReport, attention_report
from tts.audio import GriffinLim
from tts.config import ExperimentConfig, config_from_dict
from tts.errors import ConfigError, TTSError
from tts.models import build_model
from tts.models.quantize import quantize_int8
from tts.models.decoding import MEL_PAD_VALUE
from tts.text import SymbolInventory, TokenizedText, Tokenizer
from tts.text.g2p import get_g2p
from tts.text.sentences import split_sentences
from tts.training.checkpoint import load_checkpoint

PRETRAINED = Path(__file__).parent / "pretrained" / "tacotron2_synthetic.pt"


@dataclass
class Segment:
    """One sentence: alignment ``(T_steps, T_text)``, mel ``(n_mels, T_mel)``, stop probs ``(T_steps,)``."""

    text: str
    tokens: TokenizedText
    mel: np.ndarray
    alignment: np.ndarray
    stop_probs: np.ndarray
    report: AttentionReport
    attention_heads: np.ndarray | None = None  # multi-head models: (L, H, T_steps, T_text)


@dataclass
class Result:
    """One input text. waveform ``(T_wav,)``; mel ``(n_mels, T_mel)`` of all sentences with pauses;
    alignment block-diagonal ``(T_steps_total, T_text_total)`` (pause steps attend nowhere)."""

    text: str
    waveform: np.ndarray
    sample_rate: int
    mel: np.ndarray
    alignment: np.ndarray
    stop_probs: np.ndarray
    segments: list[Segment]
    reduction_factor: int = 1
    pause_steps: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def attention_heads(self) -> np.ndarray | None:
        """Multi-head models: every encoder-decoder head over all sentences ``(L, H, T_steps, T_text)``,
        laid out like :attr:`alignment`; ``None`` for single-attention models."""
        if self.segments[0].attention_heads is None:
            return None
        return block_diagonal([seg.attention_heads for seg in self.segments], self.pause_steps)

    @property
    def tokens(self) -> list[str]:
        return [s for seg in self.segments for s in seg.tokens.symbols + ["~"]]

    @property
    def failures(self) -> list[str]:
        return sorted({f.split(" (")[0] for seg in self.segments for f in seg.report.failures})

    @property
    def duration(self) -> float:
        return len(self.waveform) / self.sample_rate

    @property
    def rtf(self) -> float:
        return self.timings.get("total", 0.0) / max(self.duration, 1e-9)

    def figure(self, checkpoint_step: int | None = None, stop_threshold: float = 0.5):
        """Alignment figure: mel on top, attention with token labels, stop curve below."""
        from tts.analysis.plots import alignment_figure

        reports = "; ".join(seg.report.summary() for seg in self.segments[:3])
        step = f" · step {checkpoint_step}" if checkpoint_step is not None else ""
        text = self.text if len(self.text) <= 110 else self.text[:107] + "..."
        return alignment_figure(self.alignment, mel=self.mel, stop_probs=self.stop_probs, tokens=self.tokens,
                                title=f"{text}{step}\n{reports}", stop_threshold=stop_threshold,
                                reduction_factor=self.reduction_factor)


class Synthesizer:
    """Batched text-to-speech with one acoustic model and Griffin-Lim."""

    def __init__(self, model: torch.nn.Module, config: ExperimentConfig, inventory: SymbolInventory,
                 device: str = "cpu", step: int = 0, int8: bool = False):
        if int8 and torch.device(device).type != "cpu":
            raise TTSError("int8 inference runs on the CPU only; drop --int8 or use --device cpu")
        self.model = quantize_int8(model) if int8 else model.to(device).eval()
        self.config, self.device, self.step = config, torch.device(device), step
        self.tokenizer = Tokenizer(inventory, config.text.mode, config.text.add_eos)
        if config.text.mode == "phoneme":
            get_g2p()  # load the G2P now, so per-text timings measure synthesis, not start-up
        self.vocoder = GriffinLim(config.audio).to(device)

    @classmethod
    def from_checkpoint(cls, path: str | Path | None = None, device: str = "cpu", int8: bool = False) -> "Synthesizer":
        """Load a training or release checkpoint (``None``: the bundled model); ``int8`` quantizes
        the decoder's weights for faster CPU inference."""
        if path is None:
            restore = (f"restore it with 'git checkout -- tts/pretrained/{PRETRAINED.name}' or train one with "
                       f"'bash egs/synthetic/run.sh' and pass --checkpoint")
            if not PRETRAINED.is_file():
                raise TTSError(f"the bundled model {PRETRAINED} is missing: {restore}")
            try:
                payload = load_checkpoint(PRETRAINED, "cpu")
            except TTSError as exc:
                raise TTSError(f"the bundled model is unreadable ({exc}): {restore}") from None
            path = PRETRAINED
        else:
            payload = load_checkpoint(path, "cpu")
        try:
            config = config_from_dict(payload["config"])
        except ConfigError as exc:
            raise TTSError(f"{path} was written by an incompatible version of this toolkit ({exc})") from None
        inventory = SymbolInventory.from_dict(payload["symbols"])
        model = build_model(config.model, len(inventory), config.audio.n_mels)
        state = {k: v.float() if v.is_floating_point() else v for k, v in payload["model"].items()}
        try:
            model.load_state_dict(state)
        except RuntimeError as exc:
            raise TTSError(f"{path} does not match this code's {config.model.name} "
                           f"({str(exc).splitlines()[0][:160]})") from None
        return cls(model, config, inventory, device, int(payload.get("step", 0)), int8)

    def prepare(self, text: str) -> list[TokenizedText]:
        """Split into sentences and tokenize; raises :class:`TTSError` if nothing is speakable."""
        pieces = []
        for sentence in split_sentences(text):
            try:
                pieces.append(self.tokenizer.encode_verbose(sentence))
            except TTSError:
                continue  # a piece of pure punctuation between sentences
        if not pieces:
            self.tokenizer.encode_verbose(text)  # raises the frontend's own message
        return pieces

    @torch.no_grad()
    def __call__(self, texts: str | list[str], batch_size: int = 8, stop_threshold: float = 0.5,
                 max_decoder_steps: int = 2000, max_frames_per_token: float = 20.0,
                 attention_window: tuple[int, int] | None = None, griffin_lim_iters: int | None = None,
                 pause_seconds: float = 0.25) -> list[Result]:
        if isinstance(texts, str):
            texts = [texts]
        start = time.perf_counter()
        prepared = [self.prepare(t) for t in texts]
        frontend_s = time.perf_counter() - start
        flat = [(ti, si, tok) for ti, pieces in enumerate(prepared) for si, tok in enumerate(pieces)]
        order = sorted(range(len(flat)), key=lambda k: len(flat[k][2].ids), reverse=True)
        segments: dict[tuple[int, int], Segment] = {}
        t0 = time.perf_counter()
        for b in range(0, len(order), batch_size):
            chunk = [flat[k] for k in order[b:b + batch_size]]
            lengths = torch.tensor([len(c[2].ids) for c in chunk])
            ids = torch.zeros(len(chunk), int(lengths.max()), dtype=torch.long)
            for i, c in enumerate(chunk):
                ids[i, : len(c[2].ids)] = torch.tensor(c[2].ids)
            out = self.model.inference(ids.to(self.device), lengths.to(self.device), stop_threshold=stop_threshold,
                                       max_decoder_steps=max_decoder_steps, max_frames_per_token=max_frames_per_token,
                                       attention_window=attention_window)
            r = self.model.reduction_factor
            for i, (ti, si, tok) in enumerate(chunk):
                frames = int(out.lengths[i])
                steps = frames // r
                alignment = out.alignments[i, :steps, : len(tok.ids)].float().cpu().numpy()
                segments[(ti, si)] = Segment(
                    text=tok.text, tokens=tok, mel=out.mel[i, :, :frames].float().cpu().numpy(), alignment=alignment,
                    stop_probs=out.stop_probs[i, :steps].float().cpu().numpy(),
                    report=attention_report(alignment, step_limit_hit=bool(out.hit_limit[i]),
                                            symbols=self.tokenizer.ids_to_symbols(tok.ids)),
                    attention_heads=(out.attention_heads[i, :, :, :steps, : len(tok.ids)].float().cpu().numpy()
                                     if out.attention_heads is not None else None))
        acoustic_s = time.perf_counter() - t0
        results = []
        for ti, text in enumerate(texts):
            segs = [segments[(ti, si)] for si in range(len(prepared[ti]))]
            t1 = time.perf_counter()
            mel, alignment, stops, pause_steps = self._join(segs, pause_seconds)
            wav = self.vocoder(torch.from_numpy(mel).to(self.device), n_iter=griffin_lim_iters).cpu().numpy()
            vocoder_s = time.perf_counter() - t1
            share = len(segs) / max(len(flat), 1)
            timings = {"frontend": frontend_s * share, "acoustic": acoustic_s * share, "vocoder": vocoder_s}
            timings["total"] = sum(timings.values())
            results.append(Result(text, wav, self.config.audio.sample_rate, mel, alignment, stops, segs,
                                  self.model.reduction_factor, pause_steps, timings))
        return results

    def _join(self, segments: list[Segment], pause_seconds: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Concatenate sentences with pauses: mel, block-diagonal alignment, stop probabilities, pause steps."""
        r = self.model.reduction_factor
        pause_steps = int(round(pause_seconds * self.config.audio.sample_rate / self.config.audio.hop_length / r))
        pause_mel = np.full((self.config.audio.n_mels, pause_steps * r), MEL_PAD_VALUE, dtype=np.float32)
        mels, stops = [], []
        for k, seg in enumerate(segments):
            if k:
                mels.append(pause_mel)
                stops.append(np.zeros(pause_steps, dtype=np.float32))
            mels.append(seg.mel)
            stops.append(seg.stop_probs)
        alignment = block_diagonal([seg.alignment for seg in segments], pause_steps)
        return np.concatenate(mels, axis=1), alignment, np.concatenate(stops), pause_steps


def block_diagonal(alignments: list[np.ndarray], pause_steps: int) -> np.ndarray:
    """Join per-sentence attention ``(..., T_steps_i, T_text_i)`` into ``(..., T_steps, T_text)``:
    sentence i attends only its own tokens, and the ``pause_steps`` between sentences attend nowhere."""
    lead = alignments[0].shape[:-2]
    n_steps = sum(a.shape[-2] for a in alignments) + pause_steps * (len(alignments) - 1)
    joined = np.zeros(lead + (n_steps, sum(a.shape[-1] for a in alignments)), dtype=np.float32)
    step = token = 0
    for a in alignments:
        joined[..., step: step + a.shape[-2], token: token + a.shape[-1]] = a
        step += a.shape[-2] + pause_steps
        token += a.shape[-1]
    return joined


def write_outputs(results: list[Result], out: str | Path, checkpoint_step: int | None = None, plots: bool = True,
                  stop_threshold: float = 0.5) -> dict:
    """Write ``<name>.wav``, ``<name>.npy`` (mel) and ``<name>.png`` (alignment) per result plus
    ``summary.json``. ``out`` ending in ``.wav`` names the file of a single result."""
    import json

    from tts.analysis.plots import save_figure
    from tts.audio import save_wav

    out = Path(out)
    if out.suffix == ".wav":
        if len(results) != 1:
            raise TTSError(f"--out {out} names one wav but there are {len(results)} texts: give a folder")
        folder, names = out.parent, [out.stem]
    else:
        folder, names = out, [f"utt{i:03d}" for i in range(1, len(results) + 1)]
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, result in zip(names, results):
        save_wav(folder / f"{name}.wav", result.waveform, result.sample_rate)
        np.save(folder / f"{name}.npy", result.mel.astype(np.float32))
        if plots:
            save_figure(result.figure(checkpoint_step, stop_threshold), folder / f"{name}.png")
        rows.append({"name": name, "wav": str(folder / f"{name}.wav"), "text": result.text,
                     "seconds": round(result.duration, 3), "rtf": round(result.rtf, 4),
                     "timings": {k: round(v, 4) for k, v in result.timings.items()}, "failures": result.failures,
                     "sentences": [seg.report.to_dict() for seg in result.segments]})
    audio = sum(r["seconds"] for r in rows)
    compute = sum(r["timings"]["total"] for r in rows)
    summary = {"checkpoint_step": checkpoint_step, "utterances": rows, "audio_seconds": round(audio, 3),
               "compute_seconds": round(compute, 3), "rtf": round(compute / max(audio, 1e-9), 4),
               "step_limit_hits": sum("step limit" in r["failures"] for r in rows)}
    (folder / "summary.json").write_text(json.dumps(summary, indent=1))
    _write_index(folder, rows, plots)
    return summary


def _write_index(folder: Path, rows: list[dict], plots: bool) -> None:
    """``index.html``: an audio player and the alignment plot per utterance (static, opens from disk)."""
    import html

    items = []
    for row in rows:
        flags = f" <b style='color:#b00'>[{', '.join(row['failures'])}]</b>" if row["failures"] else ""
        image = f"<br><img src='{row['name']}.png' style='max-width:100%'>" if plots else ""
        items.append(f"<h3>{row['name']}{flags}</h3><p>{html.escape(row['text'])}</p>"
                     f"<audio controls src='{row['name']}.wav'></audio> {row['seconds']:.2f} s, RTF {row['rtf']:.3f}"
                     f"{image}")
    (folder / "index.html").write_text("<!doctype html><html><head><meta charset='utf-8'><title>synthesis</title>"
                                       "</head><body style='font-family:sans-serif;max-width:1200px;margin:2em'>"
                                       + "".join(items) + "</body></html>")
