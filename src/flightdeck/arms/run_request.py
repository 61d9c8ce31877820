"""What ``experiment run`` is asked, and the run it makes with the project's params.

A :class:`RunRequest` holds the flags as the person gave them (None: not given); params.yaml's
``harness_sandbox.<arm>`` and ``sandbox`` fill what they left out, and the project's root and
holdouts complete the :class:`~flightdeck.arms.runner.RunConfig` the runner takes; its
repositories go to the runner apart, as ``Project.repos``. ``Suite.run``
(:mod:`flightdeck.project`) is the verb that does both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.arms.limits import Limits
from flightdeck.arms.runner import RunConfig
from flightdeck.arms.workspace import DEFAULT_CAP_MB
from flightdeck.errors import InputError
from flightdeck.params import Params


@dataclass(frozen=True)
class RunRequest:
    """An arm's run as asked: the harness command and the flags (None: params, then defaults)."""

    command: str
    jobs: int | None = None  # None: the number of cores
    timeout: float | None = None
    model: str | None = None
    by: str | None = None
    sandbox: str | None = None  # None: params' harness_sandbox.<arm>.sandbox, then sandbox
    network: bool | None = None  # None: params' harness_sandbox.<arm>.network, then the model's
    network_allow: tuple[str, ...] = ()  # HOST:PORT; none: params' harness_sandbox.<arm>
    pass_env: tuple[str, ...] = ()  # after params' harness_sandbox.<arm>.pass_env
    bind: tuple[Path, ...] = ()  # after params' harness_sandbox.<arm>.bind
    limits: Limits = field(default_factory=Limits)
    workspace_cache_mb: int | None = None  # None: DEFAULT_CAP_MB
    scratch: bool | None = None  # a scratch run (#21); None: Suite.run_request decides

    def config(self, suite_dir: Path, arm: str, params: Params) -> RunConfig:
        """The runner's config for ``arm`` on the suite ``suite_dir`` of the project ``params``."""
        arm_sandbox = params.harness_sandbox.get(arm, {})
        return RunConfig(
            suite_dir=suite_dir,
            arm=arm,
            command=self.command,
            root=params.root,
            jobs=self.jobs or os.cpu_count() or 1,
            timeout=self.timeout,
            model=self.model,
            by=self.by,
            sandbox=self.sandbox or arm_sandbox.get("sandbox") or params.sandbox,
            network=self.network
            if self.network is not None or self.network_allow
            else arm_sandbox.get("network"),
            network_allow=self._network_allow(arm_sandbox),
            pass_env=tuple(arm_sandbox.get("pass_env", ())) + self.pass_env,
            bind=tuple(params.root / b for b in arm_sandbox.get("bind", ())) + self.bind,
            limits=self.limits,
            holdouts=params.holdouts,
            workspace_cache_mb=self.workspace_cache_mb or DEFAULT_CAP_MB,
            scratch=bool(self.scratch),
        )

    def _network_allow(self, arm_sandbox: dict[str, Any]) -> tuple[str, ...]:
        """The allow-list: the flags' when they say anything of the network, else params'."""
        if self.network_allow and self.network is not None:
            raise InputError(
                "--network-allow",
                None,
                "--network/--no-network and --network-allow cannot be used together; --network "
                "shares the whole host network, --network-allow only the targets named",
            )
        if self.network_allow or self.network is not None:
            return self.network_allow
        return tuple(arm_sandbox.get("network_allow", ()))
