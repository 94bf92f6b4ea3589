"""The model endpoints a run declares (``model_endpoints``): ``https://host[:port]``, read
once here for the config's check and for the model proxy that serves them."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


class EndpointError(ValueError):
    """A model endpoint that cannot be declared."""


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}"


def parse_endpoint(text: str) -> Endpoint:
    """``https://host[:port]`` (a base URL's path is allowed and ignored)."""
    parts = urlsplit(text)
    if parts.scheme != "https" or not parts.hostname:
        raise EndpointError(f"model endpoint {text!r}: must be an https:// URL with a host")
    if parts.username or parts.password:
        raise EndpointError(f"model endpoint {text!r}: credentials go in pass_env, not the URL")
    try:
        port = parts.port or 443
    except ValueError:
        raise EndpointError(f"model endpoint {text!r}: the port is not a number") from None
    return Endpoint(parts.hostname.lower(), port)
