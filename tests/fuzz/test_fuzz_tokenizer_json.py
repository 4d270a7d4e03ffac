"""Generated hostile tokenizer.json files (tokjson.py): each loads and encodes, or is refused with
a message, within a budget per case of CASE_SECONDS of CPU time and CASE_MB of traced memory;
never a traceback, a hang or a MemoryError. Run in a child process under an address-space limit
(its start + 1 GiB) and a wall-clock timeout, so a hang or a runaway allocation fails the test
instead of the machine."""
import json
import subprocess
import sys

from tests.conftest import REPO
from tests.fuzz.profile import TOKJSON_CASES

CASE_SECONDS = 10.0     # a file's regexes: probes at load (0.25 s each), 1 s + 10 µs/char per encode
CASE_MB = 256.0         # the texts are under 2 KB; a normaliser may grow one to 20 x + 256 chars


def test_generated_tokenizer_json_files_load_or_are_refused_within_their_budget():
    proc = subprocess.run([sys.executable, "-m", "tests.fuzz.tokjson", "--cases",
                           str(TOKJSON_CASES)], cwd=REPO, capture_output=True, text=True,
                          timeout=60 + 20 * TOKJSON_CASES)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{TOKJSON_CASES} cases: {result['counts']}; slowest {result['slowest'][0]} s CPU "
          f"(case {result['slowest'][1]}), largest {result['largest'][0]} MB (case "
          f"{result['largest'][1]})")
    assert proc.returncode == 0 and not result["findings"], result["findings"][:3]
    assert set(result["counts"]) <= {"loaded", "clear"} and result["counts"].get("clear", 0) > 0
    assert result["slowest"][0] <= CASE_SECONDS and result["largest"][0] <= CASE_MB
