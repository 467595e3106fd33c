"""User settings: environment variables over a TOML file in the platform config dir.

Secrets never live in the file: the file names the environment variables that
hold keys, and keys are read from the environment as ``SecretStr``.
"""

from __future__ import annotations

import math
import re
import os
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import AfterValidator, BaseModel, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

APP_NAME = "vajra-tui"


def config_dir() -> Path:
    return Path(os.environ.get("VAJRA_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME))


def config_path() -> Path:
    return config_dir() / "config.toml"


def data_dir() -> Path:
    return Path(os.environ.get("VAJRA_DATA_DIR") or platformdirs.user_data_dir(APP_NAME))


def cache_dir() -> Path:
    return Path(os.environ.get("VAJRA_CACHE_DIR") or platformdirs.user_cache_dir(APP_NAME))


# Every environment variable a settings object named as holding a key ([llm] and [tavily]
# api_key_env, from the file, the environment or a caller): recordings redact their values
# whatever the variable is called (not only *_API_KEY / *_TOKEN).
_KEY_ENVS: set[str] = set()


def remember_key_env(name: str) -> None:
    """Note that ``name`` holds a secret; called whenever a settings object names its key's variable."""
    if isinstance(name, str) and name:
        _KEY_ENVS.add(name)


def key_env_names() -> frozenset[str]:
    """The variables that settings objects of this process named as holding keys."""
    return frozenset(_KEY_ENVS)


class _KeyEnv(BaseModel):
    """A settings group whose ``api_key_env`` (a field of each subclass, in its own place
    among the fields) names the variable that holds its key."""

    def model_post_init(self, context: object) -> None:
        remember_key_env(getattr(self, "api_key_env", ""))

    def api_key(self) -> SecretStr | None:
        name = getattr(self, "api_key_env", "")
        remember_key_env(name)  # a name assigned after construction counts too
        value = os.environ.get(name, "").strip()
        return SecretStr(value) if value else None


MAX_TOKENS = 1_000_000  # the largest [llm] max_tokens accepted


# An API's address: http(s) with a host (a typo such as "notaurl" reached the client unsaid).
HTTP_URL = re.compile(r"https?://[^\s/?#]+\S*")
MAX_RETRIES = 20


def _http_url(value: str) -> str:
    if not HTTP_URL.fullmatch(value):
        raise ValueError("want an http:// or https:// address, such as https://api.example.com/v1/")
    return value


class LLMSettings(_KeyEnv):
    base_url: Annotated[str, AfterValidator(_http_url)] = "https://api.tokenfactory.nebius.com/v1/"
    model: str = Field("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5", min_length=1)
    fallback_model: str = "nvidia/Llama-3_1-Nemotron-Ultra-253B-v1"
    api_key_env: str = "NEBIUS_API_KEY"
    # seconds: positive and finite (-1 was accepted and handed to the HTTP client)
    timeout_s: float = Field(120.0, gt=0, allow_inf_nan=False)
    first_token_timeout_s: float = Field(60.0, gt=0, allow_inf_nan=False)
    max_retries: int = Field(2, ge=0, le=MAX_RETRIES)
    # The token limit of one reply: a positive count, at most MAX_TOKENS (no model streams a
    # million tokens in one answer; 1e23 was taken and sent to the server as it was).
    max_tokens: int = Field(4096, ge=1, le=MAX_TOKENS)
    # The sampling temperature the OpenAI-compatible APIs take: 0 to 2 (-1 was accepted).
    temperature: float = Field(0.4, ge=0.0, le=2.0)


class TavilySettings(_KeyEnv):
    base_url: Annotated[str, AfterValidator(_http_url)] = "https://api.tavily.com"
    api_key_env: str = "TAVILY_API_KEY"
    timeout_s: float = Field(10.0, gt=0, allow_inf_nan=False)
    max_results: int = Field(3, ge=1, le=20)  # Tavily's own range


PREPARE_DEADLINE_S = 300.0  # the default of TimingSettings.prepare_deadline_s (see there)
# The most warm-up and timed dispatches per kernel (--warmup, --reps, [timing] warmup and reps,
# VAJRA_TIMING__REPS ...). 1000 timed dispatches give a median far past any noise (the default
# is 9) and still fit one timestamp query set (WebGPU allows 4096 queries, two per dispatch:
# --reps 10000 fell back to timing one dispatch at a time, after a validation error); more
# only kept the GPU busy for hours, and --reps 10000 ended in "OverflowError: timeout is too
# large" from a deadline past what poll() takes.
MAX_REPS = 1_000
MAX_WARMUP = 1_000


class TimingSettings(BaseModel):
    # The same limits as the CLI flags: a config or VAJRA_REPS=0 used to "crash" the baseline
    warmup: int = Field(5, ge=0, le=MAX_WARMUP)
    reps: int = Field(9, ge=1, le=MAX_REPS)
    method: Literal["auto", "wall"] = "auto"  # auto: device timestamps where the adapter has them
    deadline_s: float | None = None  # None: max(10 s, or 30 s on software; 20x the baseline median)
    # warm: caches keep what the previous dispatch left (as a real pipeline sees it);
    # cold: a write of twice the GPU's L2 between timed dispatches flushes them.
    cache: Literal["warm", "cold"] = "warm"
    # The workload's own Python (make_inputs, reference) on the worker's Prepare: one that never
    # returns must not hold a run for long, but a large float64 reference may need minutes.
    # 300 s covers the shipped workloads at their largest sizes many times over; a bigger one
    # raises it here (VAJRA_TIMING__PREPARE_DEADLINE_S, or [timing] prepare_deadline_s).
    prepare_deadline_s: float = PREPARE_DEADLINE_S
    # Before a batch, run its kernels untimed until NVML shows the SM clock at 90% of its
    # maximum (at most 0.5 s; gpu/telemetry.py). An H100 idles at 345 MHz within 1.5 s; after
    # 5 s idle the bring-up took 0.40 s and every batch then ran at 1980 MHz, within 0.5% of
    # warm numbers, and the nine-workload seed tune took no longer with it (benchmarks/NOTES.md,
    # round 14). Where NVML is absent it does nothing. Off: VAJRA_TIMING__CLOCK_BRING_UP=0.
    clock_bring_up: bool = True

    @field_validator("deadline_s", "prepare_deadline_s")
    @classmethod
    def _deadline(cls, value: float | None) -> float | None:
        """0 would mean "no deadline" by accident and nan/inf never fire: a hung kernel would hang Vajra."""
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError("must be a number of seconds greater than 0 (leave it out for the default)")
        return value


class Settings(BaseSettings):
    """All of Vajra's knobs. Env: VAJRA_LLM_BASE_URL, VAJRA_LLM_MODEL, VAJRA_THEME, ..."""

    model_config = SettingsConfigDict(
        env_prefix="VAJRA_", env_nested_delimiter="__", extra="ignore"
    )

    llm: LLMSettings = Field(default_factory=LLMSettings)
    tavily: TavilySettings = Field(default_factory=TavilySettings)
    timing: TimingSettings = Field(default_factory=TimingSettings)
    theme: str = "textual-dark"
    # What a tune may crown: "portable", kernels inside WebGPU's default limits (what any
    # browser gives a page that asks for nothing more), or "adapter", this adapter's own limits.
    # VAJRA_LIMITS, [top level] limits = "adapter", or --limits.
    limits: Literal["portable", "adapter"] = "portable"
    # Candidates an evolution round proposes: the TUI's `e`, and `tune` without --budget.
    # VAJRA_BUDGET, or [top level] budget = 4.
    budget: int = Field(6, ge=1, le=1000)
    keys: dict[str, str] = Field(default_factory=dict)  # action -> key overrides

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = _ConfigFile(settings_cls, toml_file=config_path())
        return (init_settings, _FlatEnvOverrides(settings_cls), env_settings, toml)


class _ConfigFile(TomlConfigSettingsSource):
    """config.toml, read as ``config_file.read_config`` reads it (and as ``check_file`` checked
    it): a regular file of at most a megabyte, a UTF-8 byte order mark dropped. pydantic-settings'
    own reader took the BOM for malformed TOML and blocked on a FIFO or /dev/zero."""

    def _read_file(self, file_path):  # type: ignore[no-untyped-def,override]
        from vajra_tui.config_file import read_config

        return read_config(Path(file_path))[0]


class _FlatEnvOverrides(PydanticBaseSettingsSource):
    """The short names the README documents (VAJRA_LLM_MODEL, VAJRA_TAVILY_BASE_URL ...)."""

    _MAP = {
        "VAJRA_LLM_BASE_URL": ("llm", "base_url"),
        "VAJRA_LLM_MODEL": ("llm", "model"),
        "VAJRA_LLM_FALLBACK_MODEL": ("llm", "fallback_model"),
        "VAJRA_TAVILY_BASE_URL": ("tavily", "base_url"),
        "VAJRA_WARMUP": ("timing", "warmup"),
        "VAJRA_REPS": ("timing", "reps"),
        "VAJRA_DEADLINE": ("timing", "deadline_s"),
    }

    def get_field_value(self, field, field_name):  # type: ignore[no-untyped-def]
        return None, field_name, False

    def __call__(self) -> dict[str, object]:
        out: dict[str, dict[str, object]] = {}
        for env, (group, key) in self._MAP.items():
            if os.environ.get(env):
                out.setdefault(group, {})[key] = os.environ[env]
        return dict(out)


def load_settings() -> Settings:
    """The effective settings; a mistake in the file or the environment is a one-line ConfigError."""
    from pydantic import ValidationError

    from vajra_tui.config_env import check_aliases, check_environment, check_theme, settings_names
    from vajra_tui.config_file import ConfigError, check_file, env_error

    check_file(config_path(), Settings)
    check_environment(os.environ, settings_names(Settings, _FlatEnvOverrides._MAP))
    check_aliases(os.environ, _FlatEnvOverrides._MAP)  # VAJRA_WARMUP=2 beside VAJRA_TIMING__WARMUP=3
    try:
        settings = Settings()
    except ValidationError as exc:  # the file validated on its own: the environment is at fault
        raise env_error(exc, _FlatEnvOverrides._MAP) from None
    except (RecursionError, ValueError):  # a VAJRA_* JSON value (VAJRA_KEYS='{...}') it cannot decode
        raise ConfigError(_unreadable_env()) from None
    check_theme(settings.theme, Settings.model_fields["theme"].default)
    return settings


def _unreadable_env() -> str:
    """Which VAJRA_* variable's JSON value pydantic-settings could not decode, and why."""
    import json

    # pydantic-settings decodes a group's variable (VAJRA_KEYS, VAJRA_TIMING) as JSON whatever
    # its first character: VAJRA_KEYS=notjson failed there too, and named no variable.
    groups = {f"VAJRA_{name.upper()}" for name in Settings.model_fields if name not in ("theme", "limits", "budget")}
    for name, value in os.environ.items():
        if name in groups or (name.startswith("VAJRA_") and value.lstrip()[:1] in ("{", "[")):
            try:
                json.loads(value)
            except RecursionError:
                return f"{name}: its JSON value is nested too deeply"
            except json.JSONDecodeError as exc:
                return f"{name}: not valid JSON ({exc.msg}, column {exc.colno})"
            except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
                return f"{name}: its JSON value holds a number of too many digits"
    return "a VAJRA_* variable holds a value that cannot be read"
