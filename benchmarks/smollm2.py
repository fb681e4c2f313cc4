"""Speed and memory of SmolLM2-135M run by the lab's own code (attention_core.smollm2), as a markdown table.

    .venv/bin/python -m benchmarks.smollm2

Measures, in this fresh process with one torch thread (as the app runs): the first load (import of the
module, sha256 of the 98 MB file, GGUF reading, keeping the 4-bit and 8-bit blocks, the tokenizer); one
forward pass of 32 tokens with every layer's attention, each matrix dequantized as it runs (median of 5); one
by-hand head; 8 greedy tokens with the KV cache; the weights' bytes and the process's resident memory. Targets
(issue 37, 2-core machine): load at most 4 s, forward at most 250 ms. The machine is shared: the load average
is printed beside the figures.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

RUNS = 5
PROMPT_32 = " ".join(["the cat sat on the mat while the dog watched"] * 3) + " the cat"  # 32 tokens


def peak_rss_mb() -> float:
    """The process's peak resident memory so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(function, runs: int | None = None) -> tuple[float, float, object]:
    """(median wall seconds, median CPU seconds of this process, the last result) over runs (RUNS by default)
    after one warm-up. On a shared machine the CPU time is the steadier figure: waiting for a core is not in it."""
    result = function()
    walls, cpus = [], []
    for _ in range(RUNS if runs is None else runs):
        start, cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    torch.set_num_threads(1)  # as the app runs
    before = peak_rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    from attention_core import smollm2 as sm

    try:
        model = sm.load_model()
    except sm.ModelUnavailable as error:
        print(f"SmolLM2 unavailable: {error}")
        return
    load, load_cpu = time.perf_counter() - start, time.process_time() - cpu
    after_load = peak_rss_mb()
    ids = sm.encode(model, PROMPT_32)
    forward, forward_cpu, result = timed(lambda: sm.forward(model, ids))
    by_hand, _, _ = timed(lambda: sm.head_by_hand(model, result, 5, 4, len(ids) - 1))
    generate, generate_cpu, tokens = timed(lambda: sm.generate(model, ids, 8), runs=min(RUNS, 3))
    c = model.config
    print(f"Load average (1, 5, 15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print("| measure | value (CPU time of this process) | target |")
    print("|---|---:|---:|")
    label = "first load (import, sha256, GGUF read, 4-bit blocks kept, tokenizer)"
    print(f"| {label} | {load:.2f} s ({load_cpu:.2f} s) | ≤ 4 s |")
    label = (
        f"forward pass, {len(ids)} tokens, every layer's attention, weights dequantized as they run (median of {RUNS})"
    )
    print(f"| {label} | {forward * 1000:.0f} ms ({forward_cpu * 1000:.0f} ms) | ≤ 250 ms |")
    print(f"| one head by hand, one query (median of {RUNS}) | {by_hand * 1000:.1f} ms | |")
    label = f"{len(tokens)} greedy tokens with the KV cache after {len(ids)} (median of {min(RUNS, 3)})"
    print(f"| {label} | {generate * 1000:.0f} ms ({generate_cpu * 1000:.0f} ms) | |")
    print(f"| one forward's tensors (Forward.nbytes) | {result.nbytes() / 1e6:.1f} MB | |")
    print(f"| weights in memory (4-bit layers, 8-bit embeddings) | {model.weight_bytes() / 1e6:.0f} MB | |")
    rss = f"{before:.0f} / {after_load:.0f} / {peak_rss_mb():.0f} MB"
    print(f"| peak RSS before the load / after it / at the end | {rss} | |")
    per_token, mha = sm.kv_cache_bytes_per_token(c), sm.mha_cache_bytes_per_token(c)
    print(f"| KV cache per token, float16 (3 KV heads; 9 with full MHA) | {per_token:,} B ({mha:,} B) | |")


if __name__ == "__main__":
    main()
