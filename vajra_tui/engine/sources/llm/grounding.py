"""Tavily web search to ground prompts in real WGSL documentation.

Grounding is an aid, never a dependency: every search is time-bounded, cached
per query (so reruns and replays cost nothing) and a failure only records an
error event and yields no snippets.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from tavily import AsyncTavilyClient

from vajra_tui.settings import TavilySettings
from vajra_tui.engine.events import Event, GroundingResult

# What one search result may put into a prompt, field by field, and all results together: a
# server (or a cache file) is data, and a 5 MB URL once made every LLM request 15 MB.
SNIPPET_CHARS = 400  # a result's content
TITLE_CHARS = 160
URL_CHARS = 300  # longer URLs are cut (with an ellipsis): a reference, not a link to follow
MAX_RESULTS = 10  # per search, whatever max_results asks (Tavily itself answers at most 20)
MAX_GROUNDING_CHARS = 6000  # every field of the results of one search (or one merge) together
MAX_CACHE_BYTES = 4 << 20  # a larger cache file is not read: the searches run again
CACHE_FILE = "tavily_cache.json"

_STRATEGY_QUERIES: dict[str, str] = {
    "A": "WGSL compute shader @workgroup_size occupancy tuning {workload} WebGPU performance",
    "B": "WGSL var<workgroup> shared memory tiling workgroupBarrier uniform control flow {workload}",
    "C": "WGSL vec4<f32> storage buffer array<vec4<f32>> fma vectorized loads {workload}",
    "D": "WebGPU WGSL {workload} kernel optimization",
}


def _trim(text: object, limit: int = SNIPPET_CHARS) -> str:
    text = str(text or "")[: limit * 4]  # never split() megabytes for a few hundred characters
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def snippet(raw: object) -> dict[str, str] | None:
    """One result as prompts and the cache hold it (every field a trimmed string), or None
    for one without a usable ``url`` (a cache entry without one used to raise KeyError)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
        return None
    url = _trim(raw["url"], URL_CHARS)
    if not url:
        return None
    return {"title": _trim(raw.get("title", ""), TITLE_CHARS), "url": url,
            "content": _trim(raw.get("content", ""))}


def bounded(results: list[dict[str, str]]) -> list[dict[str, str]]:
    """The first results whose fields fit :data:`MAX_GROUNDING_CHARS` together (at most
    :data:`MAX_RESULTS`): what a prompt gets, however many a search or a cache held."""
    out: list[dict[str, str]] = []
    used = 0
    for result in results[:MAX_RESULTS]:
        size = sum(len(v) for v in result.values())
        if used + size > MAX_GROUNDING_CHARS:
            break
        out.append(result)
        used += size
    return out


def _snippets(raw: list[Any]) -> list[dict[str, str]]:
    return bounded([s for s in map(snippet, raw) if s is not None])


class Grounding:
    """Tavily searches for a strategy or for compiler messages, cached per query."""

    def __init__(
        self,
        settings: TavilySettings,
        emit: Callable[[Event], None],
        cache_dir: Path | None = None,
    ) -> None:
        self.settings = settings
        self.emit = emit
        self.cache_dir = cache_dir
        self._cache: dict[str, list[dict[str, str]]] = {}
        self._client: AsyncTavilyClient | None = None
        self._lock = asyncio.Lock()
        self._load_cache()

    @property
    def enabled(self) -> bool:
        """A Tavily API key is present in the environment."""
        return self.settings.api_key() is not None

    # -- cache ---------------------------------------------------------------
    def _cache_path(self) -> Path | None:
        return self.cache_dir / CACHE_FILE if self.cache_dir else None

    def _load_cache(self) -> None:
        path = self._cache_path()
        if path is None or not path.exists():
            return
        try:
            if path.stat().st_size > MAX_CACHE_BYTES:
                return
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return
        if isinstance(data, dict):  # an old or edited file: every entry trimmed as a fresh one is
            for q, results in data.items():
                if isinstance(results, list):
                    self._cache[q] = _snippets(results)

    def _save_cache(self) -> None:
        path = self._cache_path()
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tavily-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self._cache, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs a repeat search

    # -- search --------------------------------------------------------------
    def _get_client(self) -> AsyncTavilyClient:
        if self._client is None:
            key = self.settings.api_key()
            self._client = AsyncTavilyClient(
                api_key=key.get_secret_value() if key else None,
                api_base_url=self.settings.base_url.rstrip("/"),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            try:
                await self._client.close()
            except Exception:  # noqa: BLE001
                pass
            self._client = None

    def _scrub(self, text: str) -> str:
        key = self.settings.api_key()
        secret = key.get_secret_value() if key else ""
        return text.replace(secret, "***") if secret else text

    async def search(self, query: str) -> list[dict[str, str]]:
        """One query: cached results, fresh results, or [] with an error event."""
        if query in self._cache:
            results = self._cache[query]
            self.emit(GroundingResult(query=query, results=results, cached=True))
            return results
        if not self.enabled:
            self.emit(GroundingResult(query=query, error="Tavily disabled (no API key)"))
            return []
        try:
            raw = await asyncio.wait_for(
                self._get_client().search(
                    query,
                    max_results=self.settings.max_results,
                    search_depth="basic",
                    timeout=self.settings.timeout_s,
                ),
                timeout=self.settings.timeout_s,
            )
            results = self._parse(raw)
        except asyncio.TimeoutError:
            self.emit(GroundingResult(query=query, error=f"timeout after {self.settings.timeout_s:g} s"))
            return []
        except Exception as exc:  # noqa: BLE001 - grounding never breaks a run
            msg = self._scrub(f"{type(exc).__name__}: {exc}".splitlines()[0])[:300]
            self.emit(GroundingResult(query=query, error=msg))
            return []
        async with self._lock:
            self._cache[query] = results
            self._save_cache()
        self.emit(GroundingResult(query=query, results=results))
        return results

    def _parse(self, raw: Any) -> list[dict[str, str]]:
        if not isinstance(raw, dict) or not isinstance(raw.get("results"), list):
            raise ValueError("unexpected Tavily response (no results list)")
        return _snippets(raw["results"][: max(self.settings.max_results, 0)])

    async def for_strategy(self, workload: str, strategy: str) -> list[dict[str, str]]:
        """Background reading for one strategy (barriers, workgroup memory, vec4 types)."""
        template = _STRATEGY_QUERIES.get(strategy, _STRATEGY_QUERIES["D"])
        return await self.search(template.format(workload=workload).strip())

    async def for_errors(self, messages: list[str]) -> list[dict[str, str]]:
        """Search the exact compiler messages (deduplicated, at most 3), merged by URL."""
        unique = [m.strip() for m in dict.fromkeys(messages) if m and m.strip()][:3]
        batches = await asyncio.gather(*(self.search(f"WGSL {m[:300]}") for m in unique))
        seen: set[str] = set()
        merged: list[dict[str, str]] = []
        for batch in batches:
            for r in batch:
                if r.get("url") not in seen:
                    seen.add(r.get("url", ""))
                    merged.append(r)
        return bounded(merged)
