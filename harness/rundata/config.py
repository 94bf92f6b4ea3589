"""RunConfig: everything that decides a run's result, read from ``run.json``."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from pathlib import Path
from typing import Any

from harness.market.frictions import CostError, CostModel, cost_model
from harness.rundata.endpoints import EndpointError, parse_endpoint
from harness.rundata.faultplan import FaultPlan, FaultPlanError, plan_from_record
from harness.vocabulary import ARMS, CLOCKS, NETWORK_POLICIES

# ``auto`` isolates the agent where bubblewrap works and falls back (saying so) elsewhere;
# ``isolated`` refuses to run without the sandbox; ``in_process`` never uses it.
AGENT_PROCESSES = ("auto", "isolated", "in_process")


# run.json is flat but for prices: anything deeper is not a config
MAX_DEPTH = 8

# agent_env: how many settings, how long each value (the receipt records them whole)
MAX_AGENT_ENV = 32
MAX_AGENT_ENV_VALUE = 2000
# what the sandbox sets itself in every cell, and the way out it offers a model-calling
# agent: a setting may not replace them
SANDBOX_SETS = frozenset(
    {
        "PATH", "HOME", "TMPDIR", "LANG", "PWD", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
        "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
        "ALL_PROXY", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    }
)  # fmt: skip
# a name that says it holds a credential: recorded, its value would be written down
_CREDENTIAL = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


class ConfigError(ValueError):
    """A run configuration that cannot be run, with the key at fault."""


@dataclass(frozen=True)
class PriceSpec:
    path: str
    source: str
    pulled_at: str = ""


@dataclass(frozen=True)
class IndexSpec:
    """The market index a run's cells are measured against (``harness.market.index``):
    one symbol's levels in a price file, with the file's source and pulled_at."""

    path: str
    source: str
    symbol: str
    pulled_at: str = ""


@dataclass(frozen=True)
class LogHead:
    """The commitment log's head (its last entry's sequence number and digest) when a
    forward execution was queued: the log the binding was read from, as a reader keeps it."""

    seq: int
    digest: str


FORWARD_KINDS = ("forward", "backtest")


@dataclass(frozen=True)
class ForwardSpec:
    """A run's binding to a commitment on the forward track's log: the commit entry (its
    digest, sequence number and stamp), the agent package it committed, the log's head
    when the run was queued, and which run this is: ``forward`` (over sessions whose bell
    is after the stamp) or ``backtest`` (the same agent over the sessions just before it,
    the other half of decay). The run's config binds it, so config_sha256 holds it."""

    kind: str
    entry: str
    seq: int
    stamped_at: str
    agent_digest: str
    log_head: LogHead

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "entry": self.entry,
            "seq": self.seq,
            "stamped_at": self.stamped_at,
            "agent_digest": self.agent_digest,
            "log_head": {"seq": self.log_head.seq, "digest": self.log_head.digest},
        }


@dataclass(frozen=True)
class RunConfig:
    bundle_path: str | os.PathLike[str] = ""
    forms: tuple[str, ...] = ()
    start: str | None = None
    end: str | None = None
    arms: tuple[str, ...] = ARMS
    clocks: tuple[str, ...] = CLOCKS
    hold_sessions: int = 5
    agent: str = "stub"
    # an agent in another process: a command (stdio) or a URL (HTTP), and its dialect
    agent_cmd: str = ""
    agent_http: str = ""
    dialect: str = "pit"
    # folders shown to a command agent read-only beside the files its command names
    agent_dirs: tuple[str, ...] = ()
    model_version: str = ""
    training_cutoff: str = ""
    prices: PriceSpec | None = None
    # the market index the cells are measured against (excess return, beta, alpha);
    # None: none, and the key is left out of the config altogether
    benchmark_index: IndexSpec | None = None
    # trading frictions (``harness.market.frictions``): None, and the key is left out of
    # the config altogether; returns are then gross
    costs: CostModel | None = None
    network_policy: str = "fail_closed"
    agent_process: str = "auto"
    probe: int = 10
    # the only hosts an isolated agent may reach, through the run's recording proxy
    model_endpoints: tuple[str, ...] = ()
    # a CA file the proxy also trusts for those endpoints (a self-hosted model's own CA)
    model_ca_file: str = ""
    # names of environment variables (API keys) handed to the agent's process, never recorded
    pass_env: tuple[str, ...] = ()
    # settings handed to the agent's process and recorded (the model's name, its base URL):
    # given as names, each value is read from the environment when the config is made; or
    # as {name: value}. Held as (name, value) pairs, sorted by name.
    agent_env: tuple[tuple[str, str], ...] = ()
    # the commitment this run executes (the forward track); None: an ordinary run, and
    # the key is left out of its config altogether
    forward: ForwardSpec | None = None
    # the fault plan an external agent runs under (seed 002; ``harness.rundata.faultplan``):
    # given as the plan's JSON object; None: no faults, and the key is left out of the
    # config altogether
    fault_plan: FaultPlan | None = None
    trajectory_path: str = "trajectory.jsonl"
    receipt_path: str = "receipt.json"
    _extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.bundle_path, os.PathLike):
            object.__setattr__(self, "bundle_path", os.fspath(self.bundle_path))
        for key in ("trajectory_path", "receipt_path"):
            if isinstance(getattr(self, key), os.PathLike):
                object.__setattr__(self, key, os.fspath(getattr(self, key)))
        for key in ("start", "end", "training_cutoff"):
            value = getattr(self, key)
            if isinstance(value, date) and not isinstance(value, datetime):
                object.__setattr__(self, key, value.isoformat())
        # one form given as a string is that form, not its letters
        object.__setattr__(
            self, "forms", (self.forms,) if isinstance(self.forms, str) else tuple(self.forms)
        )
        object.__setattr__(self, "arms", tuple(self.arms))
        for key in ("model_endpoints", "pass_env", "agent_dirs"):
            value = getattr(self, key)
            object.__setattr__(self, key, (value,) if isinstance(value, str) else tuple(value))
        object.__setattr__(self, "clocks", tuple(self.clocks))
        object.__setattr__(self, "agent_env", _agent_env(self.agent_env))
        if isinstance(self.prices, dict):
            object.__setattr__(self, "prices", _price_spec(self.prices))
        if self.benchmark_index is not None and not isinstance(self.benchmark_index, IndexSpec):
            object.__setattr__(self, "benchmark_index", _index_spec(self.benchmark_index))
        if self.costs is not None and not isinstance(self.costs, CostModel):
            object.__setattr__(self, "costs", _costs(self.costs))
        if isinstance(self.forward, dict):
            object.__setattr__(self, "forward", forward_spec(self.forward))
        if self.fault_plan is not None and not isinstance(self.fault_plan, FaultPlan):
            object.__setattr__(self, "fault_plan", _fault_plan(self.fault_plan))
        validate(self)

    def scoring_body(
        self,
        *,
        start: str,
        end: str,
        forms: tuple[str, ...],
        agent_process: str,
        agent: str,
        agent_source_sha256: str | None,
        prices: dict[str, str] | None,
        external: dict[str, str] | None = None,
        index: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """The settings that can change a result, as the run resolved them: the window,
        the agent that ran (its name and the sha256 of its module source), the prices
        used (file name and sha256, source, pulled_at) and the agent's process
        (``isolated`` or ``in_process``).

        Output paths and the release's location are left out: the release is bound
        by its content digest, and writing into another folder is the same run.
        """
        return {
            "forms": sorted(forms),
            "start": start,
            "end": end,
            "arms": list(self.arms),
            "clocks": list(self.clocks),
            "hold_sessions": self.hold_sessions,
            "agent": agent,
            "agent_source_sha256": agent_source_sha256,
            # an external agent: its transport, dialect and digest (absent otherwise)
            **(external or {}),
            "model_version": self.model_version,
            "training_cutoff": self.training_cutoff,
            "prices": prices,
            # the market index (its file, digest, statement and symbol) and the cost
            # model (each absent without one)
            **({"benchmark_index": index} if index is not None else {}),
            **({"costs": self.costs.to_json()} if self.costs is not None else {}),
            "network_policy": self.network_policy,
            "agent_process": agent_process,
            "probe_items": self.probe,
            "model_endpoints": sorted(parse_endpoint(e).label for e in self.model_endpoints),
            # the agent's recorded settings (absent when it has none)
            **({"agent_env": dict(self.agent_env)} if self.agent_env else {}),
            # the commitment it executes (absent for an ordinary run)
            **({"forward": self.forward.to_json()} if self.forward is not None else {}),
            # the fault plan it ran under, whole, with its digest (absent without one)
            **(
                {"fault_plan": {"sha256": self.fault_plan.sha256, **self.fault_plan.record()}}
                if self.fault_plan is not None
                else {}
            ),
        }

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> RunConfig:
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{file}: no such config file") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{file}: not valid JSON ({exc})") from None
        except RecursionError:
            raise ConfigError(f"{file}: nested too deeply") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{file}: must hold a JSON object")
        if _depth(data) > MAX_DEPTH:
            raise ConfigError(f"{file}: nested deeper than {MAX_DEPTH} levels")
        config = cls.from_dict(data)
        # Relative paths in run.json are relative to the file, not to the shell.
        base = file.resolve().parent

        def anchor(value: str) -> str:
            return str(base / value) if value and not Path(value).is_absolute() else value

        prices = config.prices
        if prices is not None:
            prices = PriceSpec(anchor(prices.path), prices.source, prices.pulled_at)
        index = config.benchmark_index
        if index is not None:
            index = IndexSpec(anchor(index.path), index.source, index.symbol, index.pulled_at)
        return replace_config(
            config,
            bundle_path=anchor(str(config.bundle_path)),
            agent_dirs=tuple(anchor(d) for d in config.agent_dirs),
            model_ca_file=anchor(config.model_ca_file),
            prices=prices,
            benchmark_index=index,
            trajectory_path=anchor(config.trajectory_path),
            receipt_path=anchor(config.receipt_path),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls) if not f.name.startswith("_")}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
            )
        values = dict(data)
        for key in ("forms", "arms", "clocks", "model_endpoints", "pass_env", "agent_dirs"):
            if key in values:
                items = values[key]
                if isinstance(items, str):
                    items = [items]
                if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                    raise ConfigError(f"{key}: must be a list of strings")
                values[key] = tuple(items)
        if "agent_env" in values and not isinstance(values["agent_env"], list | dict):
            raise ConfigError(
                "agent_env: must be a list of environment variable names or an object {name: value}"
            )
        for key, read in _OBJECTS.items():
            if values.get(key) is not None:
                values[key] = read(values[key])
        try:
            return cls(**values)
        except TypeError as exc:
            raise ConfigError(str(exc)) from None


def _fault_plan(data: Any) -> FaultPlan:
    try:
        return plan_from_record(data)
    except FaultPlanError as exc:
        raise ConfigError(f"fault_plan: {exc}") from None


def _price_spec(data: Any) -> PriceSpec:
    if not isinstance(data, dict):
        raise ConfigError("prices: must be an object {path, source, pulled_at}")
    extra = sorted(set(data) - {"path", "source", "pulled_at"})
    if extra:
        raise ConfigError(f"prices: unknown key(s) {', '.join(extra)}")
    for key in ("path", "source"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ConfigError(f"prices.{key}: required, a non-empty string")
    pulled = data.get("pulled_at", "")
    if not isinstance(pulled, str):
        raise ConfigError("prices.pulled_at: must be a string")
    return PriceSpec(data["path"], data["source"], pulled)


def _index_spec(data: Any) -> IndexSpec:
    keys = ("path", "source", "symbol", "pulled_at")
    if not isinstance(data, dict):
        raise ConfigError("benchmark_index: must be an object {path, source, symbol, pulled_at}")
    extra = sorted(set(data) - set(keys))
    if extra:
        raise ConfigError(f"benchmark_index: unknown key(s) {', '.join(extra)}")
    for key in keys[:3]:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ConfigError(f"benchmark_index.{key}: required, a non-empty string")
    pulled = data.get("pulled_at", "")
    if not isinstance(pulled, str):
        raise ConfigError("benchmark_index.pulled_at: must be a string")
    return IndexSpec(data["path"], data["source"], data["symbol"], pulled)


def _costs(data: Any) -> CostModel:
    try:
        return cost_model(data)
    except (CostError, TypeError) as exc:
        raise ConfigError(str(exc)) from None


# run.json's keys that hold an object, each read by its own reader
_OBJECTS: dict[str, Callable[[Any], Any]] = {
    "prices": lambda data: _price_spec(data),
    "benchmark_index": lambda data: _index_spec(data),
    "costs": lambda data: _costs(data),
    "forward": lambda data: forward_spec(data),
    "fault_plan": lambda data: _fault_plan(data),
}


_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_FORWARD_KEYS = ("kind", "entry", "seq", "stamped_at", "agent_digest", "log_head")


def _seq(key: str, value: Any, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ConfigError(f"{key}: must be an integer, at least {low}")
    return value


def _digest(key: str, value: Any) -> str:
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise ConfigError(f"{key}: must be sha256:<64 lowercase hex digits>")
    return value


def forward_spec(data: Any) -> ForwardSpec:
    """``forward`` as run.json gives it: every key present and of its type, or a
    ConfigError naming the key."""
    if isinstance(data, ForwardSpec):
        return data
    if not isinstance(data, dict):
        raise ConfigError(f"forward: must be an object {{{', '.join(_FORWARD_KEYS)}}}")
    unknown = sorted(set(data) - set(_FORWARD_KEYS))
    if unknown:
        raise ConfigError(f"forward: unknown key(s) {', '.join(unknown)}")
    missing = [k for k in _FORWARD_KEYS if k not in data]
    if missing:
        raise ConfigError(f"forward.{missing[0]}: required")
    if data["kind"] not in FORWARD_KINDS:
        raise ConfigError(f"forward.kind: {data['kind']!r} is not one of {list(FORWARD_KINDS)}")
    stamped = data["stamped_at"]
    try:
        if not isinstance(stamped, str) or not _STAMP.fullmatch(stamped):
            raise ValueError
        datetime.fromisoformat(stamped.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            "forward.stamped_at: must be the entry's stamp, YYYY-MM-DDTHH:MM:SSZ"
        ) from None
    head = data["log_head"]
    if not isinstance(head, dict) or sorted(head) != ["digest", "seq"]:
        raise ConfigError("forward.log_head: must be an object {seq, digest}")
    spec = ForwardSpec(
        kind=data["kind"],
        entry=_digest("forward.entry", data["entry"]),
        seq=_seq("forward.seq", data["seq"], 1),
        stamped_at=stamped,
        agent_digest=_digest("forward.agent_digest", data["agent_digest"]),
        log_head=LogHead(
            seq=_seq("forward.log_head.seq", head["seq"], 1),
            digest=_digest("forward.log_head.digest", head["digest"]),
        ),
    )
    if spec.log_head.seq < spec.seq:
        raise ConfigError(
            f"forward.log_head.seq: {spec.log_head.seq} is before the commitment's entry "
            f"{spec.seq} (the head is read after the entry exists)"
        )
    return spec


def _agent_env(given: Any) -> tuple[tuple[str, str], ...]:
    """``agent_env`` as (name, value) pairs sorted by name: a name alone takes its value
    from the environment now (refused when unset), a pair or an object's entry as given."""
    if isinstance(given, str):
        given = (given,)
    items = list(given.items()) if isinstance(given, dict) else list(given)
    pairs: dict[str, str] = {}
    for item in items:
        if isinstance(item, str):
            name, value = item, os.environ.get(item) if _ENV_NAME.fullmatch(item) else ""
            if value is None:
                raise ConfigError(f"agent_env: {item} not set in the environment")
        elif isinstance(item, tuple | list) and len(item) == 2:
            name, value = item
        else:
            raise ConfigError("agent_env: each entry is a variable's name or (name, value)")
        if not isinstance(name, str) or not isinstance(value, str):
            raise ConfigError("agent_env: names and values must be strings")
        if name in pairs:
            raise ConfigError(f"agent_env: {name} is given twice")
        pairs[name] = value
    return tuple(sorted(pairs.items()))


def replace_config(config: RunConfig, **changes: Any) -> RunConfig:
    values = {f.name: getattr(config, f.name) for f in fields(config) if not f.name.startswith("_")}
    values.update(changes)
    return RunConfig(**values)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _check_day(key: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise ConfigError(f"{key}: must be a date string YYYY-MM-DD")
    try:
        if not _DAY.fullmatch(value):
            raise ValueError
        date.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"{key}: {value!r} is not a date (YYYY-MM-DD)") from None


def validate(config: RunConfig) -> None:
    """Every key's type and range; the first problem is raised, naming its key."""
    for check in (_check_strings, _check_window, _check_grid, _check_numbers, _check_choices,
                  _check_egress, _check_forward, _check_faults, _check_outputs):  # fmt: skip
        check(config)


def _check_faults(config: RunConfig) -> None:
    # a Python agent named here; an external one passed without agent_cmd or agent_http
    # (the site's) is checked when the run resolves its agent
    named = config.agent != "stub" and not (config.agent_cmd or config.agent_http)
    if config.fault_plan is not None and named:
        raise ConfigError(
            "fault_plan: a fault plan needs an external agent (agent_cmd or agent_http): "
            "it changes what the agent is shown on the wire"
        )


def _check_strings(config: RunConfig) -> None:
    if not isinstance(config.bundle_path, str):
        raise ConfigError("bundle_path: must be a string")
    for key in ("agent", "agent_cmd", "agent_http", "dialect", "model_version",
                "training_cutoff", "trajectory_path", "receipt_path"):  # fmt: skip
        if not isinstance(getattr(config, key), str):
            raise ConfigError(f"{key}: must be a string")
    if not config.agent:
        raise ConfigError("agent: must name an agent ('stub' or 'module:attribute')")
    if config.agent_cmd and config.agent_http:
        raise ConfigError("agent_cmd and agent_http: name one external agent, not both")
    if (config.agent_cmd or config.agent_http) and config.agent != "stub":
        raise ConfigError(
            f"agent {config.agent!r} and {'agent_cmd' if config.agent_cmd else 'agent_http'}: "
            "name one agent (a Python agent by name, or an external one)"
        )
    if config.dialect not in ("pit", "sharpebench"):
        raise ConfigError(f"dialect: {config.dialect!r} is not one of ['pit', 'sharpebench']")
    if config.dialect != "pit" and not (config.agent_cmd or config.agent_http):
        raise ConfigError("dialect: only an external agent (agent_cmd, agent_http) speaks one")
    if config.agent_dirs and not config.agent_cmd:
        raise ConfigError("agent_dirs: only a command agent (agent_cmd) is shown folders")
    if not all(isinstance(d, str) and d for d in config.agent_dirs):
        raise ConfigError("agent_dirs: must be a list of folder paths")


def _check_forward(config: RunConfig) -> None:
    if config.forward is None:
        return
    if not isinstance(config.forward, ForwardSpec):
        raise ConfigError("forward: must be an object {kind, entry, seq, ...}")
    if config.agent_http:
        raise ConfigError(
            "forward: an HTTP agent runs no commitment: what answers behind a URL can "
            "change, so only a stdio package's digest is committed"
        )


def _check_window(config: RunConfig) -> None:
    _check_day("start", config.start)
    _check_day("end", config.end)
    if config.start and config.end and config.start > config.end:
        raise ConfigError(f"start {config.start} is after end {config.end}")
    if config.training_cutoff:
        _check_day("training_cutoff", config.training_cutoff)


def _check_grid(config: RunConfig) -> None:
    for key, allowed in (("arms", ARMS), ("clocks", CLOCKS)):
        chosen = getattr(config, key)
        bad = [v for v in chosen if v not in allowed]
        if bad or not chosen or len(set(chosen)) != len(chosen):
            raise ConfigError(f"{key}: {list(chosen)} must be distinct values from {list(allowed)}")
    if "main" not in config.arms:
        raise ConfigError("arms: must include main (control arms are scored on its clocks)")


def _check_numbers(config: RunConfig) -> None:
    for key, low, high, what in (
        ("hold_sessions", 1, 250, "must be an integer from 1 to 250"),
        ("probe", 0, 1000, "number of probe items, an integer from 0 to 1000"),
    ):
        value = getattr(config, key)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ConfigError(f"{key}: {what}")


def _check_choices(config: RunConfig) -> None:
    for key, allowed in (("network_policy", NETWORK_POLICIES), ("agent_process", AGENT_PROCESSES)):
        value = getattr(config, key)
        if value not in allowed:
            raise ConfigError(f"{key}: {value!r} is not one of {list(allowed)}")


def _check_egress(config: RunConfig) -> None:
    for endpoint in config.model_endpoints:
        if not isinstance(endpoint, str):
            raise ConfigError("model_endpoints: must be a list of https:// URLs")
        try:
            parse_endpoint(endpoint)
        except EndpointError as exc:
            raise ConfigError(str(exc)) from None
    if not isinstance(config.model_ca_file, str):
        raise ConfigError("model_ca_file: must be a path")
    for name in config.pass_env:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ConfigError(f"pass_env: {name!r} is not an environment variable name")
    if config.pass_env and not config.model_endpoints:
        raise ConfigError("pass_env: only a run with model_endpoints passes variables on")
    _check_agent_env(config)


def _check_agent_env(config: RunConfig) -> None:
    """Settings the agent is handed and the receipt records: never a credential (those go
    in pass_env, never written), never what the sandbox sets itself, bounded."""
    if not config.agent_env:
        return
    if not config.model_endpoints:
        raise ConfigError("agent_env: only a run with model_endpoints passes variables on")
    if len(config.agent_env) > MAX_AGENT_ENV:
        raise ConfigError(f"agent_env: at most {MAX_AGENT_ENV} settings")
    for name, value in config.agent_env:
        if not _ENV_NAME.fullmatch(name):
            raise ConfigError(f"agent_env: {name!r} is not an environment variable name")
        if name in config.pass_env or _CREDENTIAL.search(name):
            raise ConfigError(
                f"agent_env: {name} would be recorded in the receipt; a key or token goes in "
                "pass_env, whose values are never written"
            )
        if name in SANDBOX_SETS:
            raise ConfigError(f"agent_env: {name} is set by the sandbox itself")
        if len(value) > MAX_AGENT_ENV_VALUE or "\x00" in value:
            raise ConfigError(
                f"agent_env: {name}'s value must be at most {MAX_AGENT_ENV_VALUE} characters, "
                "with no NUL"
            )


def _check_outputs(config: RunConfig) -> None:
    outputs = {os.path.abspath(config.trajectory_path), os.path.abspath(config.receipt_path)}
    if len(outputs) == 1:
        raise ConfigError(
            f"trajectory_path and receipt_path are the same file ({config.receipt_path}): "
            "one would overwrite the other"
        )
