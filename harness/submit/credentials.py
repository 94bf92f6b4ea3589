"""Where ``pit-harness submit`` finds the site's API token: the environment, or a file of
the submitter's own, never the command line (a word on the command line lands in the
shell's history and in every process listing).

1. ``PITWEB_TOKEN`` (what ``make demo`` prints to paste), when set and not empty;
2. else the first line of ``$XDG_CONFIG_HOME/pitweb/token`` (``~/.config/pitweb/token``
   when ``XDG_CONFIG_HOME`` is unset or not an absolute path).

The file is refused, as ssh refuses a private key, when anyone but its owner may read or
write it (any group or other permission bit), when it belongs to another user, or when it
is not a regular file: a token others can read is a token others hold.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

TOKEN_VARIABLE = "PITWEB_TOKEN"
SITE_VARIABLE = "PITWEB_URL"


class TokenError(Exception):
    """No usable token: what is wrong and how to put it right."""


def token_file(environ: Mapping[str, str], home: Path) -> Path:
    """The token file's path (XDG's base directory rule)."""
    config = environ.get("XDG_CONFIG_HOME", "")
    base = Path(config) if config and Path(config).is_absolute() else home / ".config"
    return base / "pitweb" / "token"


def find_token(environ: Mapping[str, str] | None = None, home: Path | None = None) -> str:
    """The token, from the environment or the token file; ``TokenError`` saying why not."""
    environ = os.environ if environ is None else environ
    given = environ.get(TOKEN_VARIABLE, "").strip()
    if given:
        return _checked(given, f"${TOKEN_VARIABLE}")
    path = token_file(environ, Path.home() if home is None else home)
    try:
        status = path.stat()
    except FileNotFoundError:
        raise TokenError(
            f"no API token: set {TOKEN_VARIABLE} (make demo prints it; the site's account "
            f"page issues one), or write it to {path} (chmod 600); a token is never taken "
            "from the command line"
        ) from None
    _refuse_exposed(path, status)
    try:
        with path.open(encoding="utf-8", errors="strict") as handle:
            first = handle.readline(4096).strip()
    except UnicodeDecodeError:
        raise TokenError(f"token file {path} is not text (UTF-8)") from None
    if not first:
        raise TokenError(f"token file {path} is empty: write the token on its first line")
    return _checked(first, str(path))


def _refuse_exposed(path: Path, status: os.stat_result) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise TokenError(f"token file {path} is not a regular file")
    getuid = getattr(os, "getuid", None)
    if getuid is not None and status.st_uid != getuid():
        raise TokenError(f"token file {path} belongs to another user (uid {status.st_uid})")
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o077:
        raise TokenError(
            f"token file {path} is accessible by others (permissions {mode:04o}): a token "
            f"others can read is theirs too; it is not used. Run: chmod 600 {path}"
        )


def _checked(token: str, where: str) -> str:
    """A token is one word of printable ASCII (it goes into an HTTP header as it is)."""
    if not all("!" <= ch <= "~" for ch in token):
        raise TokenError(f"the token in {where} holds a space or a character no token has")
    return token
