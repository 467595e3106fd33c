"""The kernel strategy library and its offline autotuner.

``propose`` gives generation 1: one kernel per strategy (A geometry, B shared
memory, C vectorized), the library's best prior for this adapter and size.
``evolve`` is a neighbourhood search: new configurations around the measured
winner (and the runners-up), never one whose ``params["key"]`` was tried, nor one
that writes a kernel already written (at small sizes many configurations do).
"""

from __future__ import annotations

import re

from itertools import chain, islice, product
from types import ModuleType
from typing import Any, Iterator, Sequence

from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.base import STRATEGIES, CandidateSource
from vajra_tui.engine.sources.library import attention, conv1d, gemv, layernorm, sgemm, sobel, softmax
from vajra_tui.engine.sources.library import fft, fft2
from vajra_tui.engine.sources.library.base import Params, Size, Template
from vajra_tui.engine.sources.library.search import by_distance, neighbours

MODULES: dict[str, ModuleType] = {"sgemm": sgemm, "softmax": softmax, "conv1d": conv1d,
                                  "sobel": sobel, "layernorm": layernorm, "gemv": gemv, "attention": attention}
MODULES.update({"fft": fft, "fft2": fft2})


def templates(workload: str) -> list[Template]:
    """The built-in workload's templates; none for any other (a user's, a package's)."""
    module = MODULES.get(workload)
    return list(module.TEMPLATES) if module is not None else []


def template(full_name: str) -> Template | None:
    workload = full_name.split("/")[0]
    if workload not in MODULES:
        return None
    return next((t for t in MODULES[workload].TEMPLATES if t.full_name == full_name), None)


def portable_view(device: DeviceInfo, features: tuple[str, ...]) -> DeviceInfo:
    """The adapter as a page that asks for no limits sees it: each limit at most WebGPU's
    default, and subgroups or f16 only when asked for."""
    from vajra_tui.engine.admission.portability import WEBGPU_DEFAULT_LIMITS

    kebab = {re.sub(r"([A-Z])", lambda m: "-" + m.group(1).lower(), k): v for k, v in WEBGPU_DEFAULT_LIMITS.items()}
    limits = {k: min(v, kebab[k]) if k in kebab and isinstance(v, int) else v for k, v in device.limits.items()}
    update: dict[str, Any] = {"limits": limits}
    if "subgroups" not in features and "subgroups" in DeviceInfo.model_fields:
        update["subgroups"] = False
    return device.model_copy(update=update)


class LibrarySource(CandidateSource):
    """Vajra's own templates: generation 1 from the priors, later ones from the winner's neighbourhood."""

    label = "library"

    def __init__(self, device: DeviceInfo | None = None, limits: str = "adapter",
                 features: tuple[str, ...] = ()) -> None:
        """``limits="portable"``: propose only what fits WebGPU's default limits and the
        optional ``features`` asked for, since nothing else can be crowned then."""
        self.device = device
        self.limits, self.features = limits, tuple(features)
        self.note = ""  # said once when the library has nothing for the workload
        self.exhausted = ""  # why evolve() proposed nothing, when it is not the usual reason

    # ---- building blocks -------------------------------------------------------
    def _device(self, ctx: GenerationContext) -> DeviceInfo | None:
        device = ctx.device or self.device
        return portable_view(device, self.features) if device is not None and self.limits == "portable" else device

    def priors(self, workload: str, size: Size, device: DeviceInfo | None) -> dict[str, list[Params]]:
        """Usable priors per strategy, best first (each completed with its key)."""
        if workload not in MODULES:
            return {}
        raw = MODULES[workload].priors(size, device)
        out: dict[str, list[Params]] = {}
        for t in templates(workload):
            seen: set[str] = set()
            out[t.strategy] = []
            for p in raw.get(t.strategy, []):
                if t.usable(p, size, device) and t.key(p) not in seen:
                    seen.add(t.key(p))
                    out[t.strategy].append(t.complete(p))
        return out

    def candidate(self, t: Template, params: Params, size: Size, device: DeviceInfo | None,
                  cid: str, name: str, strategy: str, generation: int, source: str = "") -> Candidate:
        """``source``: the kernel already rendered from ``params`` (it is rendered when empty)."""
        p = t.complete(params)
        return Candidate(id=cid, name=name, strategy=strategy, generation=generation, params=p,
                         origin=f"library: {t.full_name} {t.describe(p)}",
                         source=source or t.render(p, size, device))

    def instantiate(self, params: Params, size: Size, device: DeviceInfo | None = None,
                    cid: str = "lib", name: str = "lib", strategy: str | None = None,
                    generation: int = 1) -> Candidate | None:
        """Re-generate a kernel from its params (e.g. at another size); None if unusable."""
        t = template(str(params.get("template", "")))
        device = device or self.device
        if t is None or not t.usable(params, size, device):
            return None
        return self.candidate(t, params, size, device, cid, name, strategy or t.strategy, generation)

    # ---- generation 1 -----------------------------------------------------------
    async def propose(self, ctx: GenerationContext, strategies: Sequence[str] = STRATEGIES) -> list[Candidate]:
        """One kernel per template strategy (the library's own A, B and C)."""
        device, size, wl = self._device(ctx), dict(ctx.workload.size), ctx.workload.name
        if not templates(wl):
            self.note = (f"library: no templates for {wl}; measured the baseline and your own kernels "
                         "(--kernel FILE; --source params tunes a kernel's // tune: overrides)")
            return []
        tried = set(ctx.tried)
        priors = self.priors(wl, size, device)
        sources = {c.source for c in ctx.candidates.values() if c.source}
        out = []
        for t in templates(wl):
            raw = MODULES[wl].priors(size, device).get(t.strategy, [])
            # the best untried prior, else the nearest untried point; never a twin of a kernel
            # already written (at small sizes two strategies can write the same one)
            found = ((p, t.render(p, size, device)) for p in chain(
                (p for p in priors.get(t.strategy, []) if p["key"] not in tried),
                self._walk(t, raw, size, device, tried, {})))
            pick = next(((p, src) for p, src in islice(found, 32) if src not in sources), None)
            if pick is None:
                continue
            tried.add(pick[0]["key"])
            sources.add(pick[1])
            out.append(self.candidate(t, pick[0], size, device, f"g{ctx.generation or 1}-{t.strategy}",
                                      t.strategy, t.strategy, ctx.generation or 1, pick[1]))
        return out

    # ---- later generations --------------------------------------------------------
    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        device, size, wl = self._device(ctx), dict(ctx.workload.size), ctx.workload.name
        if not templates(wl):
            self.exhausted = f"library: no templates for {wl}: nothing to evolve"
            return []
        budget = max(0, int(ctx.budget))
        tried = set(ctx.tried)
        measured = sorted(
            (r for r in ctx.results
             if r.status == "verified" and r.median_ms and template(str(r.params.get("template", "")))
             and str(r.params.get("template", "")).startswith(wl + "/")),
            key=lambda r: r.median_ms)
        tried |= {str(r.params["key"]) for r in ctx.results if r.params.get("key")}
        times: dict[str, float] = {}
        for r in measured:
            times.setdefault(str(r.params["key"]), float(r.median_ms))
        seeds: list[tuple[Template, Params]] = []
        if ctx.winner is not None and template(str(ctx.winner.params.get("template", ""))):
            seeds.append((template(ctx.winner.params["template"]), ctx.winner.params))
        for r in measured:
            t = template(r.params["template"])
            if all(t.key(r.params) != s.key(q) for s, q in seeds):
                seeds.append((t, r.params))
        priors = self.priors(wl, size, device)
        if not seeds:  # nothing measured: start from the best priors, C first
            for s in ("C", "B", "A"):
                t = next(t for t in templates(wl) if t.strategy == s)
                seeds += [(t, p) for p in priors.get(s, [])[:1]]
        picks: list[tuple[Template, Params, str]] = []
        keys: set[str] = set(tried)
        # At small sizes several configurations write the same kernel (an axis past the size
        # changes nothing): such a twin would only come back "duplicate", so it takes no slot.
        sources = {c.source for c in ctx.candidates.values() if c.source}
        twins_left = 8 * budget + 16  # a bound on renders that find only twins

        def take(t: Template, p: Params) -> bool:
            nonlocal twins_left
            k = t.key(p)
            if k in keys or twins_left <= 0 or not t.usable(p, size, device):
                return False
            keys.add(k)
            source = t.render(t.complete(p), size, device)
            if source in sources:
                twins_left -= 1
                return False
            sources.add(source)
            picks.append((t, p, source))
            return True

        # untried seeds themselves (priors when nothing was measured)
        for t, p in seeds:
            if len(picks) < budget and t.key(p) not in times:
                take(t, p)
        best = times[min(times, key=times.get)] if times else 0.0
        streams = [self._stream(t, p, times, best) for t, p in seeds[:3]]
        quotas = [max(1, (2 * budget + 2) // 3), max(1, budget // 4), max(1, budget // 6)]
        for stream, quota in zip(streams, quotas):
            got = 0
            for t, p in stream:
                if len(picks) >= budget or got >= quota:
                    break
                got += take(t, p)
        for stream in streams:  # leftover budget: keep walking from the best seed
            for t, p in stream:
                if len(picks) >= budget:
                    break
                take(t, p)
        for t in templates(wl):  # neighbourhoods exhausted: other strategies' priors
            for p in priors.get(t.strategy, []):
                if len(picks) < budget:
                    take(t, p)
        for t, p in seeds:  # a budget past all of that: farther points, nearest the best first
            if len(picks) >= budget:
                break
            for q in by_distance(t, t.point(p)):
                if len(picks) >= budget:
                    break
                take(t, q)
        return [self.candidate(t, p, size, device, f"g{ctx.generation}-{letter}{i}",
                               f"{letter}{i}", letter, ctx.generation, source)
                for i, (t, p, source) in enumerate(picks[:budget], 1)]

    def _stream(self, t: Template, p: Params, times: dict[str, float],
                best: float) -> Iterator[tuple[Template, Params]]:
        point = t.point(p)
        for q in neighbours(t, point, times, best):
            yield t, q

    def _walk(self, t: Template, starts: list[Params], size: Size, device: DeviceInfo | None,
              tried: set[str], times: dict[str, float]) -> Iterator[Params]:
        """Neighbourhoods of the starts, then the whole space in axis order."""
        for s in starts:
            for q in neighbours(t, t.point(s), times, 0.0):
                if t.key(q) not in tried and t.usable(q, size, device):
                    yield t.complete(q)
        for values in product(*t.axes.values()):
            q = dict(zip(t.axes, values))
            if t.key(q) not in tried and t.usable(q, size, device):
                yield t.complete(q)


__all__ = ["LibrarySource", "MODULES", "STRATEGIES", "template", "templates"]
