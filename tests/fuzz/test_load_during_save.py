"""A load while the same folder is being saved (one saver, one reader: the supported case). Two
processes run side by side for ``RACE_SECONDS``: the saver writes model A and model B into one
folder in turn, the reader loads it in a loop. A and B differ recognisably in both files (A:
norm_eps 1e-5 and every weight 1.0; B: norm_eps 2e-5 and every weight 2.0), so a load that pairs
one model's config.json with the other's weights is seen. Kept: no mixed pair, no failed load,
and the saver never dies (commit.py's locking protocol)."""
import json
import subprocess
import sys

from tests.conftest import REPO
from tests.fuzz.profile import RACE_SECONDS

SCRIPT = f"""
import json, sys, time, traceback
sys.path.insert(0, {str(REPO)!r})
import numpy as np
from minillm import GPT, ModelConfig
from minillm.io.checkpoints import load_hf_checkpoint
from minillm.model.params import empty_params

role, folder, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
def model(tag):
    config = ModelConfig(vocab_size=26, n_ctx=16, d_model=32, n_heads=2, n_layers=1,
                         norm_eps=tag * 1e-5)
    params = empty_params(config)
    for w in params.named().values():
        w[...] = tag
    return GPT(config, params)
end, counts = time.monotonic() + seconds, {{"role": role}}
if role == "saver":
    models, n = [model(1), model(2)], 0
    while n == 0 or time.monotonic() < end:
        try:
            models[n % 2].save_pretrained(folder)
        except BaseException:
            traceback.print_exc()
            print(json.dumps({{"role": role, "saves": n, "died": True}}))
            sys.exit(1)
        n += 1
    counts.update(saves=n, died=False)
else:
    counts.update(loads=0, mixed=0, failed=0)
    while time.monotonic() < end:
        try:
            config, params = load_hf_checkpoint(folder)
        except Exception as exc:
            counts["failed"] += 1
            counts.setdefault("errors", []).append(f"{{type(exc).__name__}}: {{exc}}"[:200])
            continue
        tag = round(config.norm_eps * 1e5)
        values = {{float(v) for w in params.named().values() for v in np.unique(w)}}
        counts["loads"] += 1
        counts["mixed"] += values != {{float(tag)}}
print(json.dumps(counts))
"""


def run(role, folder, seconds):
    return subprocess.Popen([sys.executable, "-c", SCRIPT, role, str(folder), str(seconds)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def race(folder, seconds):
    """{"saver": counts, "reader": counts} of one race of ``seconds``."""
    first = run("saver", folder, 0.0)          # one complete save before the reader starts
    assert first.wait() == 0, first.stderr.read()
    saver, reader = run("saver", folder, seconds), run("reader", folder, seconds)
    out = {}
    for proc in (saver, reader):
        stdout, stderr = proc.communicate(timeout=seconds + 120)
        counts = json.loads(stdout.strip().splitlines()[-1])
        counts.update(returncode=proc.returncode, stderr=stderr[-2000:])
        out[counts["role"]] = counts
    return out


def test_a_load_during_a_save_sees_one_whole_model_and_the_saver_lives(tmp_path):
    counts = race(tmp_path / "model", RACE_SECONDS)
    saver, reader = counts["saver"], counts["reader"]
    print(f"race of {RACE_SECONDS} s: {saver['saves']} saves, {reader['loads']} loads, "
          f"{reader['mixed']} mixed pairs, {reader['failed']} failed loads, saver died: "
          f"{saver['died']}")
    assert saver["returncode"] == 0 and not saver["died"], saver["stderr"]
    assert reader["returncode"] == 0, reader["stderr"]
    assert reader["mixed"] == 0 and reader["failed"] == 0, reader.get("errors", [])[:3]
    assert saver["saves"] >= 10 and reader["loads"] >= 10    # (the two really ran side by side)
