"""Sharing a scan between processes: one per core, forked where that is safe.

A task function runs here when there is one job or one task, else in a pool of worker
processes that each hold a :class:`ScanState` and add the bytes they finish to one shared
counter, which the parent turns into progress. A worker that dies is a bug, not bad input
(:class:`WorkerDiedError`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flightdeck.errors import WorkerDiedError
from flightdeck.holdouts.decode import Progress

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


@dataclass(frozen=True, slots=True)
class ScanState:
    """What every task of one scan needs: the tails, the chunk size, where progress goes."""

    tails: frozenset[bytes]
    chunk_size: int
    report: Progress


def available_cores() -> int:
    """The number of cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class Runner:
    """Maps a task function over tasks, here (one job or one task) or in worker processes."""

    def __init__(self, state: ScanState, jobs: int) -> None:
        self.state = state
        self.jobs = jobs
        self.pool: ProcessPoolExecutor | None = None
        self.done: Any = None  # a shared counter of bytes done, for progress
        self.reported = 0

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def map(
        self,
        func: Callable[[Any, ScanState], list[Any]],
        tasks: Sequence[Any],
        stop: Callable[[Any], bool] = lambda _item: False,
    ) -> list[Any]:
        """Every task's items, in no set order; returns early after an item that ``stop``s."""
        results: list[Any] = []
        if self.jobs <= 1 or len(tasks) <= 1:
            for task in tasks:
                items = func(task, self.state)
                results += items
                if any(stop(item) for item in items):
                    break
            return results
        import concurrent.futures

        pool = self._pool(min(self.jobs, len(tasks)))
        pending = {pool.submit(_in_worker, func, task) for task in tasks}
        try:
            while pending:
                done, pending = concurrent.futures.wait(
                    pending, timeout=0.25, return_when=concurrent.futures.FIRST_COMPLETED
                )
                items = [item for future in done for item in future.result()]
                results += items
                current = self.done.value
                if current > self.reported:
                    self.state.report(current - self.reported)
                    self.reported = current
                if any(stop(item) for item in items):
                    break  # leaving the runner cancels the tasks not yet started
        except concurrent.futures.process.BrokenProcessPool as exc:
            message = "a scan process died (was a file cut short during the scan?)"
            raise WorkerDiedError(message) from exc
        return results

    def _pool(self, jobs: int) -> ProcessPoolExecutor:
        import multiprocessing
        import threading
        from concurrent.futures import ProcessPoolExecutor

        if self.pool is None:
            # fork where it is safe (Linux, no other threads): workers start in milliseconds
            linux_unthreaded = sys.platform == "linux" and threading.active_count() == 1
            context = multiprocessing.get_context("fork" if linux_unthreaded else "spawn")
            self.done = context.Value("q", 0)
            self.pool = ProcessPoolExecutor(
                max_workers=jobs,
                mp_context=context,
                initializer=_init_worker,
                initargs=(self.state.tails, self.state.chunk_size, self.done),
            )
        return self.pool


_WORKER_STATE: list[ScanState] = []


def _init_worker(tails: frozenset[bytes], chunk_size: int, done: Any) -> None:
    def report(n: int) -> None:
        with done.get_lock():
            done.value += n

    _WORKER_STATE.append(ScanState(tails, chunk_size, report))


def _in_worker(func: Callable[[Any, ScanState], list[Any]], task: Any) -> list[Any]:
    return func(task, _WORKER_STATE[-1])
