"""What ``generate``'s machine-readable flags go with: ``--json``, ``--json-final``,
``--logprobs K`` and ``--prompts``, refused together with what they cannot serve, before the model
loads (``--logprobs`` without a JSON output has nowhere to go; ``--beams`` samples no tokens)."""
from __future__ import annotations

from minillm.cli.candidates import MAX_CANDIDATES


def check_output_flags(args, show) -> None:
    """What --json, --json-final, --logprobs and --prompts go with, refused before the model loads."""
    as_json = args.json or args.json_final
    if args.logprobs is not None:
        if not as_json:
            raise ValueError("--logprobs K goes with --json or --json-final (the text alone has "
                             "no place for log-probabilities)")
        if not 1 <= args.logprobs <= MAX_CANDIDATES:
            raise ValueError(f"--logprobs must be an integer from 1 to {MAX_CANDIDATES} (the "
                             f"alternatives listed per token), got {args.logprobs}")
    if as_json and (show is not None or args.beams is not None):
        raise ValueError("--json/--json-final report sampled tokens: leave out --show-candidates "
                         "and --beams")
    if args.prompts is not None:
        others = {"--beams": args.beams is not None, "--stop": bool(args.stop),
                  "--json/--json-final": as_json, "--show-candidates": show is not None,
                  "--sliding-window": args.sliding_window, "--logprobs": args.logprobs is not None}
        given = [flag for flag, on in others.items() if on]
        if given:
            raise ValueError(f"--prompts writes one JSON result per prompt and takes only the "
                             f"sampling flags and --max-new-tokens; leave out {', '.join(given)}")
