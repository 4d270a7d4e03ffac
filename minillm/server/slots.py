"""Many requests at once: the continuous batcher (decoding/serving.py) with one generation's
settings per slot, run by one thread that the HTTP handlers talk to through queues.

``ContinuousBatcher`` shares one sampler and one generator among its requests; a server's
requests each bring their own (temperature, stop strings, logprobs, a constraint, a seed). So
``SlotBatcher`` keeps the batcher's slots, admission, cache packing and [B, 1] decode step, and
replaces only what happens to each row's logits (``_choose``): the row's own mask (structured
output), its own sampler and generator, its own ``StepWriter`` (text held back at stop strings,
log-probs). Each request's draws come from its own ``np.random.default_rng(seed)``, and a
request's logits do not depend on which other requests share the step (the padding rule of
serving.py), so the same seed gives the same text alone and under load (tests/server/).

    handler thread                       batch thread (``Engine``, one)
    live = engine.submit(job, out=q)  ──►  inbox -> a free slot (prefill) -> every step:
    q.get() (streaming.py)            ◄──  ("step", Step) ... ("end", finish_reason)
    engine.cancel(live)               ──►  (a client gone) its slot is freed before the next step

The batch thread never waits for a client: a slow reader only fills its own queue.
"""
from __future__ import annotations

import dataclasses
import queue
import threading
import time

import numpy as np

from minillm.decoding.constraints.masked import mask_logits
from minillm.decoding.generate_args import uses_history
from minillm.decoding.serving import ContinuousBatcher, Request
from minillm.decoding.steps import Step, StepWriter


@dataclasses.dataclass
class Live(Request):
    """A request in the batcher: ``Request``'s prompt and ids, plus its own settings, text writer,
    constraint state, the queue its events go to and whether its client has gone."""
    settings: object = None
    writer: StepWriter | None = None
    state: int = 0
    out: queue.Queue = dataclasses.field(default_factory=queue.Queue)
    cancelled: bool = False
    keep_logits: bool = False      # the page's requests: each step's raw logits [V] too


class Tagged:
    """A Live's ``out`` for one of a request's n choices: its events go, as (index, event), into
    one queue the request's handler reads."""

    def __init__(self, shared: queue.Queue, index: int):
        self.shared, self.index = shared, index

    def put(self, event) -> None:
        self.shared.put((self.index, event))


class SlotBatcher(ContinuousBatcher):
    """A ContinuousBatcher whose every slot samples with its own ``GenerationSettings``;
    ``cut`` counts the running requests freed because their client went away; ``clock`` the
    batch thread's seconds (wall and CPU) in prompt forwards (each new request's first token)
    and in whole steps, admissions included (benchmarks/bench_server.py reads them)."""
    cut = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.clock = {"prefill_wall": 0.0, "prefill_cpu": 0.0, "step_wall": 0.0, "step_cpu": 0.0}

    def step(self) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        super().step()
        self.clock["step_wall"] += time.perf_counter() - wall
        self.clock["step_cpu"] += time.thread_time() - cpu

    def _admit(self, joining) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        super()._admit(joining)
        self.clock["prefill_wall"] += time.perf_counter() - wall
        self.clock["prefill_cpu"] += time.thread_time() - cpu

    def add(self, live: Live) -> None:
        if live.settings.guide is not None:
            live.state = live.settings.guide.start
        live.writer = StepWriter(live.settings)
        self.waiting.append(live)

    def sweep(self) -> None:
        """Drop the cancelled requests: waiting ones leave the queue, running ones their slot."""
        if any(r.cancelled for r in self.waiting):
            self.waiting = type(self.waiting)(r for r in self.waiting if not r.cancelled)
        for b, r in enumerate(self.slots):
            if r is not None and r.cancelled:
                self._finish(b, "cancelled")
                self.cut += 1

    def _choose(self, rows: list[int], logits: np.ndarray) -> None:
        """Each row's next token (``logits`` [R, V], R = len(rows)) by its own settings."""
        for b, row in zip(rows, logits):                      # row: [V]
            try:
                self._choose_one(b, row)
            except (ValueError, TypeError) as exc:            # e.g. a constraint with no way on
                self.slots[b].out.put(("error", str(exc)))
                self._finish(b, None)

    def _choose_one(self, b: int, logits: np.ndarray) -> None:
        r, s = self.slots[b], self.slots[b].settings
        guide, z = s.guide, logits                            # [V]
        if guide is not None:
            z = mask_logits(logits, guide.allowed(r.state))   # [V] the pattern's tokens only
        seen = np.concatenate([r.prompt, np.asarray(r.new, dtype=np.int64)]) \
            if uses_history(s.sampler) else None              # [P + n] for the penalties only
        P = len(r.prompt)
        token = int(s.sampler.sample(z, s.rng, history=seen, prompt_len=P))
        if token in s.stop_ids:                               # not shown; held text released
            if tail := r.writer.held_text():
                r.out.put(("step", Step(None, tail)))
            return self._finish(b, "stop")
        if guide is not None:
            r.state = guide.advance(r.state, token)
        if r.keep_logits:                                     # before its step (inspector.py)
            r.out.put(("logits", logits.copy()))
        r.new.append(token)
        full = len(r.new) == r.max_new_tokens
        complete = guide is not None and guide.is_finished(r.state)   # nothing can follow
        shown = s.sampler.probs(z, history=seen, prompt_len=P) if s.top_n else None   # [V]
        r.out.put(("step", r.writer.step(token, logits, full or complete, shown)))
        if r.writer.stopped or complete:
            self._finish(b, "stop")
        elif full:
            self._finish(b, "length")

    def _finish(self, b: int, reason: str | None) -> None:
        """Free slot b (its cache row is marked empty); tell its client why it ended."""
        r = self.slots[b]
        if reason is not None:
            r.out.put(("end", reason))
        self.slots[b] = None
        self.cache.valid[b] = False

    def fail_all(self, message: str) -> None:
        """After an error of the step itself: every request told, the cache emptied."""
        for r in [*self.waiting, *(s for s in self.slots if s is not None)]:
            r.out.put(("error", message))
        self.waiting.clear()
        self.slots = [None] * len(self.slots)
        self.cache.valid[:] = False
        self.cache.length = 0


class Engine:
    """The batch thread: ``submit`` a Job, read its events from ``out``, ``cancel`` it; ``close``
    lets the running requests finish for ``grace`` seconds, then cuts the rest."""

    def __init__(self, model, slots: int, capacity: int):
        self.batcher = SlotBatcher(model, batch_size=slots, capacity=capacity)
        self.inbox: queue.Queue = queue.Queue()
        self.wake = threading.Event()
        self.closing = False
        self.steps = 0
        self.thread = threading.Thread(target=self._run, name="minillm-batch", daemon=True)
        self.thread.start()

    def submit(self, job, settings=None, out=None, keep_logits: bool = False) -> Live:
        """Queue ``job`` (with ``settings``, default the job's own; events into ``out``, default
        the Live's own queue)."""
        live = Live(id=0, prompt=np.asarray(job.prompt, dtype=np.int64),
                    max_new_tokens=job.max_tokens, settings=settings or job.settings,
                    keep_logits=keep_logits)
        if out is not None:
            live.out = out
        self.inbox.put(live)
        self.wake.set()
        return live

    def cancel(self, live: Live) -> None:
        live.cancelled = True
        self.wake.set()

    def _run(self) -> None:
        b = self.batcher
        while True:
            while not self.inbox.empty():
                b.add(self.inbox.get())
            b.sweep()
            if not b.busy():
                if self.closing:
                    return
                self.wake.wait(timeout=1.0)
                self.wake.clear()
                continue
            try:
                b.step()
                self.steps += 1
            except Exception as exc:      # noqa: BLE001 (the thread must outlive one bad step)
                b.fail_all(f"generation failed: {type(exc).__name__}: {exc}")

    def close(self, grace: float) -> None:
        """No new work; the running requests get ``grace`` seconds, then each is cut."""
        self.closing = True
        self.wake.set()
        self.thread.join(timeout=grace)
        if self.thread.is_alive():
            for r in [*self.batcher.waiting, *(s for s in self.batcher.slots if s is not None)]:
                r.cancelled = True
            self.wake.set()
            self.thread.join(timeout=10.0)
