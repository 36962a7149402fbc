"""The build configuration: the wasm target, which has no event-domain module.

Upstream compiles its event-domain driver (one ordered completion space per queue, with tokens
that cross domains) only for native targets. This package is the wasm configuration: ordering
comes from WebGPU's in-order queue, and the only host barriers are a download and
``runtime.synchronize()``. Anything that would need an event domain raises
``EventDomainUnavailable`` instead of silently degrading to blocking behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import EventDomainUnavailable


@dataclass(frozen=True)
class BuildConfig:
    target: str
    event_domains: bool
    ordering: str
    host_barriers: tuple[str, ...]


CONFIG = BuildConfig(
    target="wasm",
    event_domains=False,
    ordering="WebGPU in-order queue: work submitted later runs later",
    host_barriers=("await tensor.download()", "await runtime.synchronize()"),
)

_ADVICE = ("the wasm configuration has no event-domain module; rely on the runtime's in-order "
           "queue, and use `await runtime.synchronize()` or a download as the host barrier")


def event_domain_driver(runtime: object) -> None:
    """Upstream's runtime scheduler asks each engine for an event-domain driver; here is none."""
    raise EventDomainUnavailable("event_domain_driver", _ADVICE)


def transfer_between_runtimes(tensor: object, target: object) -> None:
    """A device-to-device move across runtimes needs a cross-domain event; wasm has none."""
    raise EventDomainUnavailable(
        "transfer_between_runtimes",
        _ADVICE + "; to move a tensor to another runtime, download it and upload it there")
