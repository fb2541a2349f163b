"""Text → wav with a trained checkpoint: ``Synthesizer.from_checkpoint(path)(texts)``.

Each text is split into sentences; all sentences of all texts are batched through the
acoustic model (each stops on its own) and vocoded one by one, and each text's sentences are
joined with short pauses, so memory grows with the longest sentence, not with the text. Every
:class:`Result` carries the audio, the mel, the joined alignment (a block diagonal over the
sentences), the tokens, per-sentence attention reports and timings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import torch

from tts import checkpoint
from tts.audio import save_wav
from tts.audio.speaker_encoder import DIM as SPEAKER_VECTOR_DIM
from tts.config import ExperimentConfig, InferenceConfig, resolve_inference
from tts.devices import Precision, check_precision, decoding_in
from tts.digest import update_with_files, update_with_state
from tts.errors import TTSError
from tts.fileio import atomic_path, writable_folder, write_text_atomic
from tts.metrics import AttentionReport, Failure, attention_report, most_diagonal_head, speech_steps
from tts.models import AutoregressiveTTS
from tts.models.decoding import StepCallback, stop_when
from tts.models.layers import decoder_steps, padded_ids
from tts.models.outputs import InferenceOutput
from tts.models.quantize import quantize_int8
from tts.onnx import OnnxAcousticModel, OnnxExport, load_onnx
from tts.plots import alignment_figure, save_figure
from tts.text import TokenizedText, Tokenizer
from tts.text.g2p import get_g2p
from tts.text.sentences import split_sentences, with_end_mark
from tts.text.symbols import SILENT_SYMBOLS
from tts.vocoder_loader import vocoder_for
from tts.vocoders import Vocoder
from tts.vocoders.catalogue import resolve

log = logging.getLogger("tts.synthesis")


@dataclass
class Segment:
    """One sentence: alignment ``(T_steps, T_text)``, mel ``(n_mels, T_mel)``, stop probs ``(T_steps,)``."""

    text: str
    tokens: TokenizedText
    symbols: list[str]  # one per id (BOS / EOS included)
    mel: np.ndarray
    alignment: np.ndarray
    stop_probs: np.ndarray
    report: AttentionReport
    attention_heads: np.ndarray | None = None  # multi-head models: (L, H, T_steps, T_text)


#: a figure shows at most this many decoder steps (the first sentences of a longer text)
FIGURE_STEPS = 3000
#: mel frames a neural vocoder is given at once (24 s at 22,050 Hz and hop 256; longer mels go in chunks)
VOCODE_CHUNK_FRAMES = 2048


@dataclass
class Result:
    """One input text. waveform ``(T_wav,)``: each sentence vocoded on its own, joined by silence
    (``T_wav = (T_mel − 1) · hop``); mel ``(n_mels, T_mel)`` of all sentences with pauses; the
    joined alignment on demand (:attr:`alignment`)."""

    text: str
    waveform: np.ndarray
    sample_rate: int
    mel: np.ndarray
    stop_probs: np.ndarray
    segments: list[Segment]
    reduction_factor: int = 1
    pause_steps: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def alignment(self) -> np.ndarray:
        """Block-diagonal ``(T_steps_total, T_text_total)`` (pause steps attend nowhere), built when
        asked: for a long text it is large (steps × tokens), so nothing keeps it."""
        return block_diagonal([seg.alignment for seg in self.segments], self.pause_steps)

    @property
    def attention_heads(self) -> np.ndarray | None:
        """Multi-head models: every encoder-decoder head over all sentences ``(L, H, T_steps, T_text)``,
        laid out like :attr:`alignment`; ``None`` for single-attention models."""
        heads = [seg.attention_heads for seg in self.segments if seg.attention_heads is not None]
        return block_diagonal(heads, self.pause_steps) if len(heads) == len(self.segments) else None

    @property
    def tokens(self) -> list[str]:
        """One label per text position of :attr:`alignment` (BOS / EOS included)."""
        return [s for seg in self.segments for s in seg.symbols]

    @property
    def failures(self) -> list[Failure]:
        """The kinds of attention failure in any sentence, by name."""
        return sorted({kind for seg in self.segments for kind in seg.report.failures}, key=lambda kind: kind.value)

    @property
    def duration(self) -> float:
        return len(self.waveform) / self.sample_rate

    @property
    def rtf(self) -> float:
        return self.timings.get("total", 0.0) / max(self.duration, 1e-9)

    def figure(self, checkpoint_step: int | None = None, stop_threshold: float = 0.5):
        """Alignment figure: mel on top, attention with token labels, stop curve below; a long text
        shows its first sentences (at most :data:`FIGURE_STEPS` decoder steps)."""
        shown: list[Segment] = []
        steps = 0
        for seg in self.segments:
            if shown and steps + seg.alignment.shape[0] > FIGURE_STEPS:
                break
            shown.append(seg)
            steps += seg.alignment.shape[0] + self.pause_steps
        part = self if len(shown) == len(self.segments) else self.first(len(shown))
        reports = "; ".join(seg.report.summary() for seg in shown[:3])
        step = f" · step {checkpoint_step}" if checkpoint_step is not None else ""
        text = self.text if len(self.text) <= 110 else self.text[:107] + "..."
        more = f" (the first {len(shown)} of {len(self.segments)} sentences)" if part is not self else ""
        return alignment_figure(part.alignment, mel=part.mel, stop_probs=part.stop_probs, tokens=part.tokens,
                                title=f"{text}{more}{step}\n{reports}", stop_threshold=stop_threshold,
                                reduction_factor=self.reduction_factor)

    def first(self, n: int) -> "Result":
        """The result of this text's first ``n`` sentences (their mel, stops and alignment; no audio)."""
        steps = sum(seg.alignment.shape[0] for seg in self.segments[:n]) + self.pause_steps * (n - 1)
        return Result(self.text, self.waveform[:0], self.sample_rate, self.mel[:, : steps * self.reduction_factor],
                      self.stop_probs[:steps], self.segments[:n], self.reduction_factor, self.pause_steps)


class Synthesizer:
    """Batched text-to-speech with one loaded acoustic model and a vocoder (default: the one its
    settings name, ``inference.vocoder``).

    ``settings`` (default: the checkpoint's ``inference`` section; see :func:`resolve_inference`)
    holds the decoding limits, attention window, batch size and Griffin-Lim's settings, and is used
    as given. ``lexicon`` (a file of ``WORD PH ON EMES`` lines) replaces the checkpoint config's.
    ``precision`` is the acoustic model's (:func:`~tts.devices.check_precision`): ``fp32``,
    ``bf16`` (decoding under bfloat16 autocast; the mels handed on are float32) or ``int8``
    (int8 weights, the CPU only); the vocoder runs in float32. An ONNX export decodes in the precision
    it was exported in (its ``precision`` reads ``int8`` for an int8 export).
    """

    def __init__(self, loaded: checkpoint.LoadedModel | OnnxExport, device: str = "cpu", precision: str = "fp32",
                 vocoder: Vocoder | None = None, lexicon: str | None = None,
                 settings: InferenceConfig | None = None):
        self.precision: Precision = check_precision(precision, device)
        self.model: AutoregressiveTTS | OnnxAcousticModel
        if isinstance(loaded, OnnxExport):
            if precision != "fp32" or torch.device(device).type != "cpu":
                raise TTSError("the ONNX engine runs the exported graphs on the CPU in the precision they were "
                               "exported in (int8: 'tts export --format onnx --int8'): drop --int8, --bf16 and --device")
            self.model = loaded.model
            if loaded.int8:
                self.precision = "int8"
        else:
            self.model = quantize_int8(loaded.model) if precision == "int8" else loaded.model.to(device).eval()
        self.config: ExperimentConfig = loaded.config
        self.settings: InferenceConfig = settings or loaded.config.inference
        self.device, self.step = torch.device(device), loaded.step
        text = dataclasses.replace(self.config.text, lexicon=lexicon) if lexicon else self.config.text
        self.tokenizer = Tokenizer.for_config(text, loaded.inventory)
        if self.config.text.mode == "phoneme":
            get_g2p()  # load the G2P now, so per-text timings measure synthesis, not start-up
        #: the short name of the settings' vocoder (``inference.vocoder``), e.g. for file names and reports
        self.vocoder_name = resolve(self.settings.vocoder).name
        if vocoder is None and isinstance(loaded, OnnxExport):
            vocoder = loaded.vocoder_named(self.settings.vocoder)
        self.vocoder = vocoder or vocoder_for(self.settings.vocoder, device, self.config.audio,
                                              self.settings.griffin_lim)
        self.vocoder.check_compatible(self.config.audio)
        self._export_folder = loaded.path if isinstance(loaded, OnnxExport) else None

    def fingerprint(self) -> str:
        """What this synthesizer computes, as a hex digest: the acoustic model's weights (an ONNX
        export's files; int8 ones when quantized), its step and model config, bf16 decoding when it
        is on, the tokenizer (inventory, mode, lexicon) and the vocoder's
        :meth:`~tts.vocoders.Vocoder.fingerprint`. The inference settings are the caller's
        to add (they may be replaced per call)."""
        tokenizer = self.tokenizer
        digest = hashlib.sha256(f"{self.step}|{self.config.model!r}|{self.config.audio!r}|{tokenizer.mode}|"
                                f"{tokenizer.add_bos}|{tokenizer.add_eos}|".encode())
        digest.update(json.dumps([tokenizer.inventory.to_dict(), sorted(tokenizer.lexicon.items())]).encode())
        if self._export_folder is not None:
            update_with_files(digest, self._export_folder)
        else:
            assert isinstance(self.model, torch.nn.Module)
            update_with_state(digest, self.model.state_dict())
        if self.precision == "bf16":
            digest.update(b"|bf16 autocast|")
        digest.update(self.vocoder.fingerprint().encode())
        return digest.hexdigest()

    @classmethod
    def from_checkpoint(cls, path: str | Path | None = None, device: str = "cpu", precision: str = "fp32",
                        lexicon: str | None = None, changes: Mapping[str, Any] | None = None) -> "Synthesizer":
        """Load a training or release checkpoint (``None``: the bundled model) to decode in
        ``precision`` (``int8``: the decoder's weights quantized, for faster CPU inference; ``bf16``:
        bfloat16 autocast, where the device computes it); ``changes``: inference settings that
        replace the checkpoint's (:func:`resolve_inference`), the vocoder among them
        (``{"vocoder": "griffin-lim"}``)."""
        loaded = checkpoint.load(path)
        return cls(loaded, device, precision, lexicon=lexicon,
                   settings=resolve_inference(loaded.config.inference, changes))

    @classmethod
    def from_onnx(cls, folder: str | Path, lexicon: str | None = None,
                  changes: Mapping[str, Any] | None = None) -> "Synthesizer":
        """Load an ONNX export (``tts export CKPT --format onnx``) to run on onnxruntime; its vocoder
        serves when the settings name it (the export's default), any other vocoder runs in PyTorch."""
        loaded = load_onnx(folder)
        return cls(loaded, lexicon=lexicon, settings=resolve_inference(loaded.config.inference, changes))

    def prepare(self, text: str, split: bool = True) -> list[TokenizedText]:
        """Split into sentences (when ``split``), close each that ends on a word with a full stop
        (:func:`with_end_mark`) and tokenize; raises :class:`TTSError` if nothing is speakable."""
        pieces = []
        for sentence in split_sentences(text) if split else [text]:
            try:
                pieces.append(self.tokenizer.encode_verbose(with_end_mark(sentence)))
            except TTSError:
                continue  # a piece of pure punctuation between sentences
        if not pieces:
            self.tokenizer.encode_verbose(text)  # raises the frontend's own message
        return pieces

    @torch.no_grad()
    def vocode(self, mel: np.ndarray, vocoder: Vocoder | None = None) -> np.ndarray:
        """One log-mel ``(n_mels, T_mel)`` → waveform ``(T_wav,)`` with this synthesizer's vocoder
        (or ``vocoder``, e.g. to compare one with another), in chunks of :data:`VOCODE_CHUNK_FRAMES`
        (:meth:`Vocoder.vocode_long`): a neural vocoder's memory grows with its input (HiFi-GAN V1:
        about 2 GB for 6,000 frames), and a passage read to the step limit has tens of thousands."""
        vocoder = vocoder or self.vocoder
        return vocoder.vocode_long(torch.from_numpy(mel).to(self.device), VOCODE_CHUNK_FRAMES).cpu().numpy()

    @property
    def speakers(self) -> list[str]:
        """The speakers a multi-speaker model speaks as (empty for one speaker)."""
        return list(self.config.model.speakers.names)

    def speaker_index(self, speaker: str | None) -> int | None:
        """``speaker``'s index in the model's table; a multi-speaker model needs one, a single-speaker
        model takes none."""
        names = self.speakers
        if speaker is not None and not isinstance(speaker, str):
            raise TTSError(f"a speaker is a name (a string), not {type(speaker).__name__}")
        if not names:
            if speaker:
                raise TTSError(f"this voice has one speaker: drop the speaker ({speaker!r:.60})")
            return None
        if not speaker:
            raise TTSError(f"this voice speaks as {len(names)} speakers: choose one of {', '.join(names)}")
        if speaker not in names:
            raise TTSError(f"unknown speaker {speaker!r:.60}: this voice knows {', '.join(names)}")
        return names.index(speaker)

    def speaker_vector(self, recording: str | Path) -> np.ndarray:
        """The d-vector ``(256,)`` of a recording of someone's speech: a voice trained on d-vectors
        (``model.speakers.vectors: ge2e``) says text as that speaker without training on them."""
        from tts.audio import load_wav
        from tts.audio.speaker_encoder import SpeakerEmbedder

        speakers = self.config.model.speakers
        if not speakers.names or speakers.vectors != "ge2e":
            raise TTSError("only a voice trained on d-vectors (model.speakers.vectors: ge2e) speaks like a recording; "
                           + (f"this one knows its speakers by name: {', '.join(speakers.names)}" if speakers.names
                              else "this one has one speaker"))
        wav, sample_rate = load_wav(recording)
        if len(wav) < sample_rate // 2:
            raise TTSError(f"{recording}: {len(wav) / sample_rate:.2f} s of audio; give at least half a second of speech")
        return SpeakerEmbedder().embed(wav, sample_rate)

    def resolve_speaker(self, speaker: str | np.ndarray | None) -> int | np.ndarray | None:
        """A speaker's name → its index in the model's table (:meth:`speaker_index`); a d-vector
        ``(256,)`` (:meth:`speaker_vector`) → itself, checked."""
        if not isinstance(speaker, np.ndarray):
            return self.speaker_index(speaker)
        if self.config.model.speakers.vectors != "ge2e" or not self.speakers:
            raise TTSError("a speaker given as a d-vector needs a voice trained on d-vectors (model.speakers.vectors: ge2e)")
        if speaker.shape != (SPEAKER_VECTOR_DIM,) or not np.isfinite(speaker).all():
            raise TTSError(f"a d-vector has {SPEAKER_VECTOR_DIM} finite numbers, got shape {speaker.shape}")
        return speaker.astype(np.float32)

    def __call__(self, texts: str | list[str], settings: InferenceConfig | None = None,
                 cancel: threading.Event | None = None, speaker: str | np.ndarray | None = None) -> list[Result]:
        """Synthesize ``texts`` with this synthesizer's settings (or ``settings``, resolved
        elsewhere), as ``speaker`` (a multi-speaker model's :attr:`speakers`, or the d-vector of a
        recording, :meth:`speaker_vector`). Setting ``cancel`` (from another thread) stops the
        work between two decoder steps with :class:`~tts.errors.Cancelled`."""
        settings = settings or self.settings
        speaker_index = self.resolve_speaker(speaker)
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            wrong = texts if not isinstance(texts, list) else next(t for t in texts if not isinstance(t, str))
            raise TTSError(f"give a text or a list of texts (str), not {type(wrong).__name__} {wrong!r:.60}")
        start = time.perf_counter()
        prepared = [self.prepare(t, settings.split_sentences) for t in texts]
        return self.synthesize_prepared(texts, prepared, settings, frontend_s=time.perf_counter() - start,
                                        cancel=cancel, speaker=speaker_index)

    @torch.no_grad()
    def synthesize_prepared(self, texts: list[str], prepared: list[list[TokenizedText]],
                            settings: InferenceConfig | None = None, frontend_s: float = 0.0,
                            cancel: threading.Event | None = None, progress: bool = False,
                            speaker: int | np.ndarray | None = None) -> list[Result]:
        """Synthesize texts already turned into sentences of tokens by :meth:`prepare` (one list
        per text); ``frontend_s``: the seconds that took, shared out in the results' timings;
        ``cancel``: as for :meth:`__call__`; ``progress``: a progress bar over the sentences and
        the texts when there is more than one batch of them; ``speaker``: what
        :meth:`resolve_speaker` gives."""
        from tqdm import tqdm

        settings = settings or self.settings
        flat = [(ti, si, tok) for ti, pieces in enumerate(prepared) for si, tok in enumerate(pieces)]
        order = sorted(range(len(flat)), key=lambda k: len(flat[k][2].ids), reverse=True)
        segments: dict[tuple[int, int], Segment] = {}
        quiet = not progress or len(flat) <= settings.batch_size
        t0 = time.perf_counter()
        with tqdm(total=len(flat), desc="decode", unit="sentence", disable=quiet) as bar:
            for b in range(0, len(order), settings.batch_size):
                chunk = [flat[k] for k in order[b:b + settings.batch_size]]
                for (ti, si, _), segment in zip(chunk, self._synthesize([c[2] for c in chunk], settings, cancel,
                                                                        speaker)):
                    segments[(ti, si)] = segment
                bar.update(len(chunk))
        acoustic_s = time.perf_counter() - t0
        results = []
        for ti, text in enumerate(tqdm(texts, desc="vocode", unit="text", disable=quiet)):
            segs = [segments[(ti, si)] for si in range(len(prepared[ti]))]
            t1 = time.perf_counter()
            mel, stops, pause_steps = self._join(segs, settings.sentence_pause)
            wav = self._vocode_sentences(segs, pause_steps)
            vocoder_s = time.perf_counter() - t1
            share = len(segs) / max(len(flat), 1)
            timings = {"frontend": frontend_s * share, "acoustic": acoustic_s * share, "vocoder": vocoder_s}
            timings["total"] = sum(timings.values())
            results.append(Result(text, wav, self.config.audio.sample_rate, mel, stops, segs,
                                  self.model.reduction_factor, pause_steps, timings))
        return results

    @torch.no_grad()
    def decode(self, ids: torch.Tensor, lengths: torch.Tensor | None, settings: InferenceConfig,
               last_token: torch.Tensor | None = None, on_step: StepCallback | None = None,
               speakers: torch.Tensor | None = None, speaker_vectors: torch.Tensor | None = None) -> InferenceOutput:
        """The acoustic model's free-running decoding (:meth:`AutoregressiveTTS.inference`: ids
        ``(B, T_text)`` → mel ``(B, n_mels, T_mel)`` ...) in this synthesizer's precision; under
        ``bf16`` the outputs are bfloat16, and each step's frames that ``on_step`` hears too."""
        with decoding_in(self.precision, self.device):
            return self.model.inference(ids, lengths, settings, last_token, on_step, speakers, speaker_vectors)

    def _synthesize(self, tokens: list[TokenizedText], settings: InferenceConfig,
                    cancel: threading.Event | None = None, speaker: int | np.ndarray | None = None) -> list[Segment]:
        """One batch of sentences through the acoustic model. Multi-head models show their most
        diagonal encoder-decoder head as the sentence's alignment."""
        ids, lengths = padded_ids([t.ids for t in tokens])
        last_token = torch.tensor([last_spoken(self.tokenizer.ids_to_symbols(t.ids)) for t in tokens])
        speakers = (torch.full((len(tokens),), speaker, device=self.device) if isinstance(speaker, int) else None)
        vectors = (torch.from_numpy(speaker).to(self.device).expand(len(tokens), -1)
                   if isinstance(speaker, np.ndarray) else None)
        out = self.decode(ids.to(self.device), lengths.to(self.device), settings, last_token.to(self.device),
                          on_step=stop_when(cancel) if cancel is not None else None, speakers=speakers,
                          speaker_vectors=vectors)
        r = self.model.reduction_factor
        segments = []
        for i, tok in enumerate(tokens):
            frames = int(out.lengths[i])
            steps, n = decoder_steps(frames, r), len(tok.ids)
            mel = out.mel[i, :, :frames].float().cpu().numpy()
            if not np.isfinite(mel).all():
                raise TTSError(f"the model produced NaN or infinite frames for {tok.text[:60]!r}: "
                               f"the checkpoint is broken, use an earlier one")
            heads = (out.attention_heads[i, :, :, :steps, :n].float().cpu().numpy()
                     if out.attention_heads is not None else None)
            alignment = (heads[most_diagonal_head(heads)] if heads is not None
                         else out.alignments[i, :steps, :n].float().cpu().numpy())
            if bool(out.hit_limit[i]):
                log.warning("%r hit the decoder step limit (%d frames) without a stop token", tok.text[:80], frames)
            symbols = self.tokenizer.ids_to_symbols(tok.ids)
            report = attention_report(alignment, step_limit_hit=bool(out.hit_limit[i]), symbols=symbols,
                                      speech=speech_steps(mel, r))
            segments.append(Segment(tok.text, tok, symbols, mel, alignment,
                                    out.stop_probs[i, :steps].float().cpu().numpy(), report, heads))
        return segments

    def _vocode_sentences(self, segments: list[Segment], pause_steps: int) -> np.ndarray:
        """Each sentence's mel vocoded on its own, joined by silence as long as a pause's frames
        (and the frame a separate mel leaves out), so ``T_wav = (T_mel − 1) · hop`` of the joined mel."""
        hop = self.config.audio.hop_length
        silence = np.zeros((pause_steps * self.model.reduction_factor + 1) * hop, dtype=np.float32)
        pieces: list[np.ndarray] = []
        for k, seg in enumerate(segments):
            if k:
                pieces.append(silence)
            pieces.append(self.vocode(seg.mel).astype(np.float32))
        return np.concatenate(pieces)

    def _join(self, segments: list[Segment], pause_seconds: float) -> tuple[np.ndarray, np.ndarray, int]:
        """Concatenate sentences with pauses: mel, stop probabilities, pause steps."""
        r, audio = self.model.reduction_factor, self.config.audio
        pause_steps = int(round(pause_seconds * audio.sample_rate / audio.hop_length / r))
        pause_mel = np.full((audio.n_mels, pause_steps * r), audio.silence, dtype=np.float32)
        mels, stops = [], []
        for k, seg in enumerate(segments):
            if k:
                mels.append(pause_mel)
                stops.append(np.zeros(pause_steps, dtype=np.float32))
            mels.append(seg.mel)
            stops.append(seg.stop_probs)
        return np.concatenate(mels, axis=1), np.concatenate(stops), pause_steps


def last_spoken(symbols: list[str]) -> int:
    """Index of the last symbol that takes time to say (not punctuation, a boundary or EOS)."""
    spoken = [i for i, s in enumerate(symbols) if s not in SILENT_SYMBOLS]
    return spoken[-1] if spoken else len(symbols) - 1


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


def output_names(out: str | Path, n_results: int) -> tuple[Path, list[str]]:
    """Where :func:`write_outputs` puts ``n_results`` results: ``(folder, file stems)``. ``out``
    ending in ``.wav`` names the file of a single result; anything else is a folder. Checked
    before any synthesis, so a bad ``--out`` costs nothing."""
    out = Path(out)
    if out.suffix.lower() == ".wav":
        if n_results != 1:
            raise TTSError(f"--out {out} names one wav but there are {n_results} texts: give a folder")
        if out.is_dir():
            raise TTSError(f"--out {out} is a folder: name the wav file, or give the folder without .wav")
        writable_folder(out.parent)
        return out.parent, [out.stem]
    if out.suffix and out.suffix.lower() != ".wav" and not out.is_dir():
        raise TTSError(f"--out {out}: give a folder, or a file name ending in .wav")
    writable_folder(out)
    return out, [f"utt{i:03d}" for i in range(1, n_results + 1)]


def write_outputs(results: list[Result], out: str | Path, checkpoint_step: int | None = None, plots: bool = True,
                  stop_threshold: float = 0.5, compare: dict[str, Callable[[np.ndarray], np.ndarray]] | None = None,
                  vocoder_name: str = "vocoder", precision: str = "fp32") -> dict:
    """Write ``<name>.wav``, ``<name>.npy`` (mel) and ``<name>.png`` (alignment) per result plus
    ``summary.json`` (with the decoding ``precision``) and ``index.html`` (see :func:`output_names`
    for the names). ``compare``: other vocoders (name → mel ``(n_mels, T_mel)`` → waveform) whose
    version of each result is written as ``<name>.<vocoder>.wav`` and played beside the main one
    (``vocoder_name``'s)."""
    folder, names = output_names(out, len(results))
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for name, result in zip(names, results):
        save_wav(folder / f"{name}.wav", result.waveform, result.sample_rate)
        versions = {vocoder_name: f"{name}.wav"}
        for other, vocode in (compare or {}).items():
            save_wav(folder / f"{name}.{other}.wav", vocode(result.mel), result.sample_rate)
            versions[other] = f"{name}.{other}.wav"
        with atomic_path(folder / f"{name}.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, result.mel.astype(np.float32))
        if plots:
            save_figure(result.figure(checkpoint_step, stop_threshold), folder / f"{name}.png")
        rows.append({"name": name, "wav": str(folder / f"{name}.wav"), "versions": versions, "text": result.text,
                     "seconds": round(result.duration, 3), "rtf": round(result.rtf, 4),
                     "timings": {k: round(v, 4) for k, v in result.timings.items()},
                     "failures": [kind.value for kind in result.failures],
                     "sentences": [seg.report.to_dict() for seg in result.segments]})
    audio = sum(result.duration for result in results)
    compute = sum(result.timings["total"] for result in results)
    summary = {"checkpoint_step": checkpoint_step, "precision": precision, "utterances": rows,
               "audio_seconds": round(audio, 3), "compute_seconds": round(compute, 3),
               "rtf": round(compute / max(audio, 1e-9), 4),
               "step_limit_hits": sum(Failure.STEP_LIMIT in r.failures for r in results)}
    write_text_atomic(folder / "summary.json", json.dumps(summary, indent=1))
    _write_index(folder, rows, plots)
    return summary


def _write_index(folder: Path, rows: list[dict], plots: bool) -> None:
    """``index.html``: an audio player and the alignment plot per utterance (static, opens from disk)."""
    items = []
    for row in rows:
        flags = f" <b style='color:#b00'>[{', '.join(row['failures'])}]</b>" if row["failures"] else ""
        image = f"<br><img src='{row['name']}.png' style='max-width:100%'>" if plots else ""
        players = "".join(f"<figure style='display:inline-block;margin:0 1em 0 0'><audio controls "
                          f"src='{html.escape(wav)}'></audio><figcaption>{html.escape(vocoder)}</figcaption></figure>"
                          for vocoder, wav in row["versions"].items())
        items.append(f"<h3>{row['name']}{flags}</h3><p>{html.escape(row['text'])}</p>"
                     f"{players} {row['seconds']:.2f} s, RTF {row['rtf']:.3f}{image}")
    write_text_atomic(folder / "index.html",
                      "<!doctype html><html><head><meta charset='utf-8'><title>synthesis</title></head>"
                      "<body style='font-family:sans-serif;max-width:1200px;margin:2em'>" + "".join(items)
                      + "</body></html>")
