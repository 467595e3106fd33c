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

SNIPPET_CHARS = 400
CACHE_FILE = "tavily_cache.json"

_STRATEGY_QUERIES: dict[str, str] = {
    "A": "WGSL compute shader @workgroup_size occupancy tuning {workload} WebGPU performance",
    "B": "WGSL var<workgroup> shared memory tiling workgroupBarrier uniform control flow {workload}",
    "C": "WGSL vec4<f32> storage buffer array<vec4<f32>> fma vectorized loads {workload}",
    "D": "WebGPU WGSL {workload} kernel optimization",
}


def _trim(text: str, limit: int = SNIPPET_CHARS) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict):
            for q, results in data.items():
                if isinstance(results, list):
                    self._cache[q] = [r for r in results if isinstance(r, dict)]

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
        out: list[dict[str, str]] = []
        for r in raw["results"][: self.settings.max_results]:
            if isinstance(r, dict) and r.get("url"):
                out.append(
                    {
                        "title": _trim(r.get("title", ""), 160),
                        "url": str(r["url"]),
                        "content": _trim(r.get("content", "")),
                    }
                )
        return out

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
                if r["url"] not in seen:
                    seen.add(r["url"])
                    merged.append(r)
        return merged
