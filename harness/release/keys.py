"""Row keys: a row's identifier in one arm, keyed so that it reveals nothing.

A key is ``r-`` and the first 16 hex digits of HMAC-SHA256 under a secret of the
builder's: of the accession number on the main arm, and of the arm's name, a NUL and the
accession on a control arm. An unkeyed hash of the accession would undo both masks: one
hash confirms the real year behind a shifted row, and hashing candidate accessions of a
filer names the issuer behind a redacted one. Keys differ per arm because trajectories
are public: with one key in every arm, a table built from a main-arm trajectory names
the issuer of every redacted row and the real date of every shifted one. The join
between arms is the release's order (the n-th line of every arm is the same filing, in
segments the index lays out), which only the harness reads; an agent sees its arm's keys.

``release synth`` derives its secret from its seed (synthetic rows reveal nothing real,
and the same arguments still write the same bytes); ``release build`` keeps its secret in
a file beside the release, never inside it, so the builder alone can rebuild the same
bytes. Nothing that reads a release (runs, ``verify``, the site) needs the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from harness.release.store import ReleaseError

SECRET_BYTES = 32
SCHEME = (
    "r- + the first 16 hex digits of HMAC-SHA256(secret, accession) on the main arm and of "
    "HMAC-SHA256(secret, arm NUL accession) on a control arm; the secret is the builder's"
)


def row_key(secret: bytes, accession: str, arm: str = "main") -> str:
    """The key of the filing ``accession`` in ``arm``."""
    message = accession if arm == "main" else f"{arm}\x00{accession}"
    return "r-" + hmac.new(secret, message.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def synthetic_secret(seed: int) -> bytes:
    """The secret of a synthetic release: derived from its seed, so builds repeat."""
    return hashlib.sha256(f"pit-harness synthetic row keys, seed {seed}".encode()).digest()


def secret_file(
    path: str | os.PathLike[str], release: str | os.PathLike[str], *, create: bool = True
) -> bytes:
    """Read the secret at ``path``, or create it there (mode 0600) when absent and
    ``create`` (a new version is keyed with its line's secret, never a new one).

    The file holds the secret as 64 hex digits. It may not lie inside the release folder,
    which is what gets published.
    """
    file, folder = Path(path).resolve(), Path(release).resolve()
    if file == folder or folder in file.parents:
        raise ReleaseError(
            f"the row-key secret {path} must lie outside the release folder {release}: "
            "the folder is what gets published"
        )
    try:
        text = file.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        if not create:
            raise ReleaseError(
                f"the row-key secret {path} does not exist: give the file the release line "
                "was built with (--row-key-secret)"
            ) from None
        secret = secrets.token_bytes(SECRET_BYTES)
        file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secret.hex() + "\n")
        return secret
    except (OSError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"the row-key secret {path} cannot be read: {exc}") from None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != SECRET_BYTES:
        raise ReleaseError(
            f"the row-key secret {path} must hold {SECRET_BYTES * 2} hex digits (as written here)"
        )
    return secret
