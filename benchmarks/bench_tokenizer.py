"""Tokenizer speed: encode MB/s next to tiktoken, and training time next to Hugging Face.

    /work/venv/bin/python benchmarks/bench_tokenizer.py [--repeats 5] [--skip-train]
        [--skip-encode] [--naive-merges 48 | --naive-full] [--reading] [--fresh [NAME ...]]

Encoding: English (Shakespeare) and Chinese (Song ci) from the development data folder (or a
synthetic stand-in when it is absent), single thread, median of `--repeats` runs, each
tokenizer's ids checked equal to tiktoken's. CPU time (time.process_time: robust on a shared
machine). Each repeat times tiktoken, cold and warm back to back; the ratios (cold/tt = speed
next to tiktoken, higher is better) are medians of the per-repeat ratios, so a slow spell of a
shared machine hits both sides. "cold" clears minillm's caches of text seen before every run
(the ids of pre-tokens and segments; what is derived from the vocabulary stays, as
tokenizer/fast/segment.py's per-character sets and the pairs batched BPE has learnt, from the
untimed first encode that checks the ids); "warm" encodes text whose pre-tokens are already
cached. `--fresh` below measures a new tokenizer, which has none of these.
`--reading` adds the reading path (`Tokenizer(fast=False)`) on a tenth of each text.

`--fresh` (instead of the cold/warm table) times what a user's first call costs: per repeat and
per text, a NEW `Tokenizer.load(name)` and its FIRST encode, against a NEW tiktoken encoding
made from the same vocabulary file by tiktoken's own loader (`load_tiktoken_bpe` on the
decompressed file, no cache) and its first `encode_ordinary`, back to back in this process;
ids checked equal. Printed: medians of the per-repeat ratios, encode alone (fresh/tt) and load
+ encode (+load), each side's load time, the first repeat's ratio apart (it also pays this
process's one-off costs, as the stdlib `re` compiling the pattern), and `Tokenizer.load` + the
encode of a 20-character prompt (English, Chinese).

Training: the first 1 MB of English to a 4,096-token vocabulary with the fast trainer, the naive
trainer (only `--naive-merges` merges unless `--naive-full`; its per-merge time is reported) and
Hugging Face `tokenizers`' BpeTrainer when installed.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from minillm.tokenizer.tokenizer import Tokenizer  # noqa: E402
from minillm.tokenizer.train import train_fast, train_naive, word_counts  # noqa: E402
from minillm.tokenizer.patterns import PreTokenizer  # noqa: E402

SHARED = Path(os.environ.get("MINILLM_SHARED_DATA", REPO.parent / "shared" / "data"))


def corpus(name: str, n_chars: int, fallback: str) -> str:
    path = SHARED / "corpora" / name
    if path.exists():
        return path.read_text(encoding="utf-8")[:n_chars]
    print(f"  ({path} absent: using a repeated synthetic stand-in; figures are not comparable)")
    return (fallback * (n_chars // len(fallback) + 1))[:n_chars]


def cpu_time(fn, before=None) -> float:
    if before:
        before()
    return cpu_timed(fn)[0]


def cpu_timed(fn):
    """(CPU seconds of `fn()`, its result)."""
    t0 = time.process_time()
    result = fn()
    return time.process_time() - t0, result


def tiktoken_encoding(name: str, tok: Tokenizer):
    try:
        import tiktoken
        import tiktoken_ext.openai_public as public
    except ImportError:
        return None
    public.load_tiktoken_bpe = public.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
    spec = {"gpt2": public.gpt2, "cl100k": public.cl100k_base, "o200k": public.o200k_base}[name]()
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=tok.encoder,
                             special_tokens=spec["special_tokens"])


def bench_encode(repeats: int, reading: bool = False) -> None:
    texts = {"English": corpus("shakespeare_7plays.txt", 1_000_000,
                               "To be, or not to be, that is the question. "),
             "Chinese": corpus("zh_songci.txt", 300_000, "海水会吸收较多红光，天空是蓝色的。")}
    print(f"encode, single thread, median of {repeats} (MB/s of UTF-8 input)")
    print(f"  {'tokenizer':8} {'text':8} {'MB':>5} {'cold':>7} {'warm':>7} {'tiktoken':>9} "
          f"{'cold/tt':>8} {'warm/tt':>8}")
    for name in ("gpt2", "cl100k", "o200k"):
        tok = Tokenizer.load(name)
        t0 = time.process_time()
        tok.fast_encoder.build_batch()  # (made by the first text with BATCH_BPE new pieces: bulk.py)
        print(f"  {name}: batched BPE made in {time.process_time() - t0:.3f} s (its pairs are "
              f"learnt as met)")
        ref = tiktoken_encoding(name, tok)
        for label, text in texts.items():
            mb = len(text.encode("utf-8")) / 1e6
            ids = tok.encode_ordinary(text)
            if ref is not None and ids != ref.encode_ordinary(text):
                raise SystemExit(f"{name} {label}: ids differ from tiktoken")
            runs = []  # (tiktoken, cold, warm) CPU seconds, measured back to back in each repeat
            for _ in range(repeats):
                tt = cpu_time(lambda: ref.encode_ordinary(text)) if ref else float("nan")
                cold = cpu_time(lambda: tok.encode_ordinary(text), tok.fast_encoder.clear)
                warm = cpu_time(lambda: tok.encode_ordinary(text))  # the cold run filled the cache
                runs.append((tt, cold, warm))
            tt, cold, warm = (statistics.median(r[k] for r in runs) for k in range(3))
            cold_tt = statistics.median(r[0] / r[1] for r in runs)
            warm_tt = statistics.median(r[0] / r[2] for r in runs)
            print(f"  {name:8} {label:8} {mb:5.2f} {mb / cold:7.2f} {mb / warm:7.2f} {mb / tt:9.2f} "
                  f"{cold_tt:8.2f} {warm_tt:8.2f}")
            if reading:  # the reading path, once, on a tenth of the text (it is slower)
                part = text[:len(text) // 10]
                t_read = cpu_time(lambda: Tokenizer.load(name, fast=False).encode_ordinary(part))
                t_cold = cpu_time(lambda: tok.encode_ordinary(part), tok.fast_encoder.clear)
                print(f"  {'':17} reading path (fast=False), a tenth: {mb / 10 / t_read:.2f} MB/s; "
                      f"cold is {t_read / t_cold:.1f}x faster")


def tiktoken_fresh(name: str, path: Path):
    """A new tiktoken encoding of `name` read from `path` (an uncompressed .tiktoken file) by
    tiktoken's loader, as `tiktoken.get_encoding` does (minus its download cache)."""
    import tiktoken
    import tiktoken_ext.openai_public as public
    from tiktoken.load import load_tiktoken_bpe
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the file itself, every time
    original, public.load_tiktoken_bpe = public.load_tiktoken_bpe, lambda *a, **k: {}
    public.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
    spec = {"gpt2": public.gpt2, "cl100k": public.cl100k_base, "o200k": public.o200k_base}[name]()
    public.load_tiktoken_bpe = original
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=load_tiktoken_bpe(
        str(path)), special_tokens=spec["special_tokens"])


def bench_fresh(repeats: int, names: list[str]) -> None:
    import gzip
    import tempfile
    from minillm.tokenizer.formats.locate import locate
    texts = {"English": corpus("shakespeare_7plays.txt", 1_000_000,
                               "To be, or not to be, that is the question. "),
             "Chinese": corpus("zh_songci.txt", 300_000, "海水会吸收较多红光，天空是蓝色的。")}
    prompts = ["Tell me about Paris.", "海水会吸收较多红光，蓝光更容易被散射回来"]  # 20 characters each
    print(f"fresh tokenizer, first encode, single thread, {repeats} repeats (MB/s of UTF-8 "
          f"input; ratios: medians of per-repeat ratios; +load: load and encode on both sides)")
    print(f"  {'tokenizer':8} {'text':8} {'MB':>5} {'fresh':>6} {'tiktoken':>8} {'fresh/tt':>8} "
          f"{'+load':>6} {'load ms':>7} {'tt load':>7} {'1st/tt':>6}")
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:  # tiktoken reads an uncompressed file
            path = Path(tmp) / f"{name}.tiktoken"
            path.write_bytes(gzip.decompress(locate(name).read_bytes()))
            for label, text in texts.items():
                mb = len(text.encode("utf-8")) / 1e6
                runs = []  # (tt load, tt encode, load, encode) CPU seconds, per repeat
                for _ in range(repeats):
                    t_load, ref = cpu_timed(lambda: tiktoken_fresh(name, path))
                    t_enc, expected = cpu_timed(lambda: ref.encode_ordinary(text))
                    load, tok = cpu_timed(lambda: Tokenizer.load(name))
                    enc, ids = cpu_timed(lambda: tok.encode_ordinary(text))
                    if ids != expected:
                        raise SystemExit(f"{name} {label}: ids differ from tiktoken")
                    runs.append((t_load, t_enc, load, enc))
                ratio = statistics.median(r[1] / r[3] for r in runs)
                with_load = statistics.median((r[0] + r[1]) / (r[2] + r[3]) for r in runs)
                tt_load, tt, load, enc = (statistics.median(r[k] for r in runs) for k in range(4))
                print(f"  {name:8} {label:8} {mb:5.2f} {mb / enc:6.2f} {mb / tt:8.2f} "
                      f"{ratio:8.2f} {with_load:6.2f} {load * 1e3:7.0f} {tt_load * 1e3:7.0f} "
                      f"{runs[0][1] / runs[0][3]:6.2f}")
        for prompt in prompts:  # a new tokenizer each time: load + a first short encode
            times = [cpu_time(lambda: Tokenizer.load(name).encode(prompt)) for _ in range(5)]
            print(f"  {name:8} Tokenizer.load + encode of {prompt!r} ({len(prompt)} characters): "
                  f"{statistics.median(times) * 1e3:.1f} ms")


def bench_train(naive_merges: int, naive_full: bool) -> None:
    text = corpus("shakespeare_7plays.txt", 1_000_000, "To be, or not to be, that is the question. ")
    vocab = 4096
    print(f"\ntraining: {len(text.encode()) / 1e6:.2f} MB of English -> vocab {vocab} "
          f"({vocab - 256} merges), GPT-2 pattern")
    t0 = time.process_time()
    words = word_counts(PreTokenizer("gpt2").split(text))
    t_count = time.process_time() - t0
    t0 = time.process_time()
    fast = train_fast(words, vocab - 256)
    t_fast = time.process_time() - t0 + t_count
    print(f"  minillm fast trainer : {t_fast:8.2f} s  ({len(fast)} merges; pre-tokenise+count "
          f"{t_count:.2f} s)")
    n = vocab - 256 if naive_full else naive_merges
    t0 = time.process_time()
    naive = train_naive(words, n)
    t_naive = time.process_time() - t0
    same = naive == fast[:len(naive)]
    est = "" if naive_full else f"; est. {t_naive / n * (vocab - 256):.0f} s for all (linear estimate)"
    print(f"  minillm naive trainer: {t_naive:8.2f} s for {n} merges ({t_naive / n * 1e3:.0f} ms/merge"
          f"{est}); merges identical to fast: {same}")
    try:
        from tokenizers import Tokenizer as HFTokenizer, models, pre_tokenizers, trainers
    except ImportError:
        print("  Hugging Face tokenizers: not installed")
        return
    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    t0 = time.process_time()
    hf.train_from_iterator([text], trainer=trainer)
    t_hf = time.process_time() - t0
    print(f"  HF tokenizers BpeTrainer (Rust, RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', 'default')}): "
          f"{t_hf:8.2f} s  -> fast/HF time ratio {t_fast / t_hf:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--skip-encode", action="store_true")
    ap.add_argument("--naive-merges", type=int, default=48)
    ap.add_argument("--naive-full", action="store_true")
    ap.add_argument("--reading", action="store_true", help="also time Tokenizer(fast=False)")
    ap.add_argument("--fresh", nargs="*", choices=["gpt2", "cl100k", "o200k"], metavar="NAME",
                    help="time a new tokenizer's first encode instead (default: gpt2)")
    args = ap.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f} (pure Python: no BLAS involved; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')})")
    if args.fresh is not None:
        bench_fresh(args.repeats, args.fresh or ["gpt2"])
    elif not args.skip_encode:
        bench_encode(args.repeats, args.reading)
    if not args.skip_train:
        bench_train(args.naive_merges, args.naive_full)


if __name__ == "__main__":
    main()
