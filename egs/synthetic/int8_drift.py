"""Where int8's free-running mel error comes from (issue #58): per sentence of ``tts bench int8``'s
batch of 16, int8 on this CPU's exact kernels and int8 weights multiplied in float (no int8 kernel
at all) against float32: the relative error free-running, after time alignment, and the largest
shift of a frame along the alignment.

    .venv/bin/python egs/synthetic/int8_drift.py --out docs/int8/<machine>/int8_drift.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from tts import checkpoint
from tts.benchmarks.precision import SENTENCES, relative_errors, time_aligned_relative_errors, warped_partners
from tts.devices import cpu_instructions
from tts.evaluation.timing import forced_steps
from tts.models.layers import padded_ids
from tts.models.quantize import Int8Kernels, Int8Product, int8_kernels, quantize_int8
from tts.text import Tokenizer


def largest_shift(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance in frames between a frame of ``b`` ``(n_mels, T)`` and its warped partner in ``a``."""
    return int(np.abs(warped_partners(a, b) - np.arange(b.shape[1])).max())


@torch.no_grad()
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    loaded = checkpoint.load(None)
    model = loaded.model.cpu().eval()
    tokenizer = Tokenizer.for_config(loaded.config.text, loaded.inventory)
    settings = loaded.config.inference
    ids, lengths = padded_ids([tokenizer.encode(SENTENCES[i % len(SENTENCES)]) for i in range(args.batch_size)])
    reference = model.inference(ids, lengths, settings)
    steps = forced_steps(int(reference.lengths.max()) // model.reduction_factor + 1, settings)
    float_weights = quantize_int8(model)
    for module in float_weights.modules():
        if isinstance(module, Int8Product):
            module.kernels = Int8Kernels(False, 0, ())
    result: dict = {"cpu_instructions": cpu_instructions(), "int8_kernels": int8_kernels().describe(), "ways": {}}
    for way, low in (("int8_kernels", quantize_int8(model)), ("int8_weights_in_float", float_weights)):
        mel = low.inference(ids, lengths, steps).mel.float()
        plain = relative_errors(mel, reference.mel, reference.lengths)
        aligned = time_aligned_relative_errors(mel, reference.mel, reference.lengths)
        shifts = [largest_shift(mel[i, :, :n].double().numpy(), reference.mel[i, :, :n].double().numpy())
                  for i, n in enumerate(reference.lengths.tolist())]
        result["ways"][way] = {
            "free_running_mean": round(float(np.mean(plain)), 4), "time_aligned_mean": round(float(np.mean(aligned)), 4),
            "sentences": [{"text": SENTENCES[i % len(SENTENCES)], "free_running": round(p, 4),
                           "time_aligned": round(a, 4), "largest_shift_frames": s}
                          for i, (p, a, s) in enumerate(zip(plain, aligned, shifts))]}
        print(way, result["ways"][way]["free_running_mean"], result["ways"][way]["time_aligned_mean"], flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
