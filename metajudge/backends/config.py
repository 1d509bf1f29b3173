"""A judge backbone is data: a small TOML or YAML file read into a :class:`BackendConfig`.

Built-in configs live in ``metajudge/backends/configs/*.toml``; user configs are every
``*.toml``/``*.yaml``/``*.yml`` in ``$METAJUDGE_BACKENDS_DIR`` (default
``$XDG_CONFIG_HOME/metajudge/backends``, i.e. ``~/.config/metajudge/backends``). A user config
with the same name as a built-in one replaces it. API keys are never part of a config: a config
names the environment variable that holds the key (``api_key_env``).

Example (an OpenAI-compatible vLLM deployment)::

    name = "qwen-vllm"
    kind = "openai"
    model = "Qwen/Qwen2.5-7B-Instruct"
    base_url = "http://vllm.internal:8000/v1"   # or a list of replicas (least-in-flight routing):
    # base_url = ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
    api_key_env = "VLLM_API_KEY"
    concurrency = 64
    price_input_per_mtok = 0.0
    price_output_per_mtok = 0.0
    n_ctx = 32768        # or leave it out: the server's /v1/models is asked (vLLM max_model_len)
    [decoding]
    temperature = 0.0
    max_tokens = 256
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from metajudge.errors import InputError

BackendKind = Literal["embedded", "openai"]
JsonMode = Literal["json_schema", "json_object_schema"]

#: Decoding fields a config may set as defaults for requests that leave them unset.
DECODING_KEYS = ("temperature", "max_tokens", "stop", "seed", "top_logprobs")


#: Whole-number fields and their least value.
_INT_MINIMA = {"concurrency": 1, "n_parallel": 1, "n_ctx": 1, "n_threads": 1, "max_retries": 0}
#: Seconds and prices: (least value, whether the least value itself is refused).
_FLOAT_MINIMA = {
    "timeout_s": (0.0, True),
    "startup_timeout_s": (0.0, True),
    "backoff_base_s": (0.0, False),
    "backoff_max_s": (0.0, False),
    "price_input_per_mtok": (0.0, False),
    "price_output_per_mtok": (0.0, False),
    "batch_discount": (0.0, False),
}


@dataclass(frozen=True)
class BackendConfig:
    """One judge backbone.

    ``kind="embedded"``: metajudge starts ``python -m llama_cpp.server`` with ``gguf`` on a free
    loopback port. ``gguf`` is a file path, ``package:<module>/<file.gguf>`` (a GGUF shipped
    inside an installed PyPI package) or ``assemble:<module>`` (a package whose ``assemble(path)``
    writes the GGUF; assembled once into :func:`metajudge.backends.models.model_dir`).

    ``kind="openai"``: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp's server)
    at ``base_url``; the key is read from the environment variable ``api_key_env`` at call time.
    ``base_urls`` lists replicas of one deployment (same model; in a file: ``base_url = [...]``);
    each call goes to the replica with the fewest calls in flight, and ``base_url`` (the first
    replica) names the deployment in cache keys, so adding a replica keeps the cache.

    ``chat=False`` marks a base model without a chat template: only ``prompt=`` requests are
    accepted. ``n_parallel`` is the number of embedded server replicas requests are spread over
    (llama-cpp-python's server runs one request at a time per process). Prices are USD per
    million tokens; ``batch_discount`` is the price factor of the OpenAI Batch API.
    """

    name: str
    kind: BackendKind = "embedded"
    model: str = ""
    base_url: str | None = None
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    gguf: str | None = None
    gguf_sha256: str | None = None
    chat: bool = True
    chat_format: str | None = None
    decoding: dict[str, Any] = field(default_factory=dict)
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    batch_discount: float = 0.5
    concurrency: int = 4
    n_parallel: int = 1
    #: context length in tokens; ``None``: ask the server (see :mod:`metajudge.backends.context`)
    n_ctx: int | None = None
    n_threads: int = 2
    logits_all: bool = True
    prompt_cache: bool = False
    #: one deadline per HTTP call: connecting, the headers and the whole body, however slowly sent
    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    json_mode: JsonMode = "json_schema"
    grammar_param: str | None = None
    native_n: bool = True
    startup_timeout_s: float = 120.0
    description: str = ""
    source: str = ""  # file the config was read from ("builtin:<file>" for built-ins)

    def __post_init__(self) -> None:
        where = self.source or None
        self._check_replicas(where)
        if self.kind not in ("embedded", "openai"):
            raise InputError(
                f"kind must be 'embedded' or 'openai', got {self.kind!r}", path=where, field="kind"
            )
        if self.kind == "openai" and not self.base_url and not self.model:
            raise InputError(
                "an openai backend needs model (and usually base_url)", path=where, field="model"
            )
        if self.kind == "embedded" and not self.gguf:
            raise InputError(
                "an embedded backend needs gguf (a path, package:… or assemble:…)",
                path=where,
                field="gguf",
            )
        if self.json_mode not in ("json_schema", "json_object_schema"):
            raise InputError(
                f"json_mode must be json_schema or json_object_schema, got {self.json_mode!r}",
                path=where,
                field="json_mode",
            )
        for k in self.decoding:
            if k not in DECODING_KEYS:
                raise InputError(
                    f"unknown decoding key {k!r} (allowed: {', '.join(DECODING_KEYS)})",
                    path=where,
                    field=f"decoding.{k}",
                )
        self._check_ranges(where)

    def _check_ranges(self, where: str | None) -> None:
        """Every number in range when read (issue 30: ``backoff_base_s = inf`` hung on the first
        retry, ``timeout_s = nan`` failed late, ``timeout_s = -1`` was accepted)."""
        for name, lo in _INT_MINIMA.items():
            v = getattr(self, name)
            if v is None and name == "n_ctx":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise InputError(
                    f"must be a whole number >= {lo}, got {v!r}", path=where, field=name
                )
        for name, (lo, strict) in _FLOAT_MINIMA.items():
            v = getattr(self, name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or v < lo or (strict and v == lo):
                sign = ">" if strict else ">="
                raise InputError(
                    f"must be a finite number {sign} {lo:g}, got {v!r}", path=where, field=name
                )

    def _check_replicas(self, where: str | None) -> None:
        urls = self.base_urls
        if isinstance(urls, str) or not all(isinstance(u, str) and u for u in urls):
            raise InputError("base_urls must be a list of URLs", path=where, field="base_urls")
        object.__setattr__(self, "base_urls", tuple(urls))
        if urls and self.base_url is None:
            object.__setattr__(self, "base_url", urls[0])
        elif urls and self.base_url not in urls:
            raise InputError(
                f"base_url {self.base_url!r} is not one of base_urls", path=where, field="base_url"
            )

    @property
    def endpoints(self) -> tuple[str, ...]:
        """The URLs calls are spread over: the replicas, else ``(base_url,)``, else none."""
        return self.base_urls or ((self.base_url,) if self.base_url else ())

    @property
    def served_model(self) -> str:
        """The model name sent in API requests (the alias for embedded servers)."""
        return self.model or self.name

    def replace(self, **overrides: Any) -> BackendConfig:
        """A copy with some fields replaced (unknown names are an :class:`InputError`)."""
        known = {f.name for f in dataclasses.fields(self)}
        bad = sorted(set(overrides) - known)
        if bad:
            raise InputError(f"unknown backend option(s): {', '.join(bad)}", field=bad[0])
        return dataclasses.replace(self, **overrides)

    def public_dict(self) -> dict[str, Any]:
        """Every field (no secret is ever part of a config, only the variable name)."""
        return dataclasses.asdict(self)


def _from_mapping(data: dict[str, Any], *, source: str) -> BackendConfig:
    if not isinstance(data, dict):
        raise InputError("a backend config must be a table/mapping", path=source)
    known = {f.name for f in dataclasses.fields(BackendConfig)}
    for k in data:
        if k not in known:
            raise InputError(f"unknown key {k!r}", path=source, field=k)
        if k in ("api_key", "key", "token"):
            raise InputError(
                "never put a key in a config; name its environment variable in api_key_env",
                path=source,
                field=k,
            )
    if "name" not in data:
        data = {**data, "name": Path(source.split(":", 1)[-1]).stem}
    data = {**data, "source": source}
    if isinstance(data.get("base_url"), list):  # base_url = [replica, ...]
        urls = data["base_url"]
        data = {**data, "base_urls": tuple(urls), "base_url": urls[0] if urls else None}
    if "decoding" in data and not isinstance(data["decoding"], dict):
        raise InputError("decoding must be a table", path=source, field="decoding")
    try:
        return BackendConfig(**data)
    except TypeError as e:  # wrong value types surface here
        raise InputError(str(e), path=source) from e


def load_config_file(path: str | Path) -> BackendConfig:
    """Read one backbone config (``.toml``, ``.yaml`` or ``.yml``)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read backend config: {e}", path=p) from e
    if p.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"invalid TOML: {e}", path=p) from e
        except RecursionError:  # tomllib recurses per nested array or inline table
            raise InputError(
                "nested too deeply (arrays or inline tables) to be a backend config",
                path=p,
                field="<toml>",
            ) from None
    elif p.suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text)
        except RecursionError:
            raise InputError(
                "nested too deeply to be a backend config", path=p, field="<yaml>"
            ) from None
        except yaml.YAMLError as e:
            line = getattr(getattr(e, "problem_mark", None), "line", None)
            raise InputError(
                f"invalid YAML: {e}", path=p, line=None if line is None else line + 1
            ) from e
    else:
        raise InputError("backend configs are .toml, .yaml or .yml files", path=p)
    return _from_mapping(data, source=str(p))


def user_config_dir() -> Path:
    """``$METAJUDGE_BACKENDS_DIR`` or ``$XDG_CONFIG_HOME/metajudge/backends``."""
    env = os.environ.get("METAJUDGE_BACKENDS_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "metajudge" / "backends"


def builtin_configs() -> list[BackendConfig]:
    """The configs shipped in ``metajudge/backends/configs``."""
    out = []
    root = resources.files("metajudge.backends").joinpath("configs")
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            out.append(_from_mapping(data, source=f"builtin:{entry.name}"))
    return out


def user_configs(directory: str | Path | None = None) -> list[BackendConfig]:
    d = Path(directory) if directory is not None else user_config_dir()
    if not d.is_dir():
        return []
    return [
        load_config_file(p) for p in sorted(d.iterdir()) if p.suffix in (".toml", ".yaml", ".yml")
    ]


def all_configs(directory: str | Path | None = None) -> dict[str, BackendConfig]:
    """Built-in configs overlaid by user configs, by name."""
    out = {c.name: c for c in builtin_configs()}
    out.update({c.name: c for c in user_configs(directory)})
    return out
