"""Writes for PITFALL's own cohorts: its sealed-suite and live-shadow artifacts uploaded by
staff, read as PITFALL writes them. Every artifact is verified by the engine on its own,
and every artifact the site holds is verified again together with the new ones
(``harness.points.pitfall_cohort.check_together``): one that does not hold, alone or
beside the others, refuses the whole upload, and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from harness.points.pitfall_cohort import check_together
from harness.points.pitfall_records import PitfallArtifactError
from harness.points.pitfall_suite import Verified, verify
from pitweb.core.audit import audit_record
from pitweb.core.errors import SubmissionError
from pitweb.core.inputs import read_json
from pitweb.points.models import PitfallArtifact
from pitweb.points.selectors import stored_artifacts

MAX_FILES = 100
MAX_FILE_BYTES = 20_000_000


def pitfall_artifacts_import(
    *, user: User | None, uploads: Sequence[tuple[str, IO[bytes]]]
) -> list[PitfallArtifact]:
    """The new artifacts among ``uploads`` (name, file), stored once every one holds on
    its own and together with those already here; the same artifact again is the same."""
    if not 1 <= len(uploads) <= MAX_FILES:
        raise SubmissionError("invalid_input", f"send 1 to {MAX_FILES} artifact files")
    now = timezone.now()
    read: list[tuple[str, str, Verified[Any]]] = []
    for name, upload in uploads:
        data = upload.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise SubmissionError("too_large", f"{name} is larger than {MAX_FILE_BYTES} bytes", 413)
        try:
            verified = verify(read_json(data, name), where=name, now=now)
        except PitfallArtifactError as exc:
            raise SubmissionError("invalid_pitfall_artifact", str(exc)[:2000]) from None
        read.append((name, data.decode("utf-8"), verified))  # read_json took it as UTF-8
    with transaction.atomic():
        known = {a.digest for a in PitfallArtifact.objects.select_for_update()}
        fresh = {v.digest: (name, text, v) for name, text, v in read if v.digest not in known}
        together = check_together([*stored_artifacts(), *(v for _, _, v in fresh.values())])
        if together.failures:
            said = "; ".join(str(f) for f in together.failures[:5])
            more = len(together.failures) - 5
            raise SubmissionError(
                "pitfall_artifacts_disagree",
                f"the artifacts do not hold together: {said}"
                + (f" (and {more} more)" if more > 0 else ""),
            )
        stored = [
            PitfallArtifact.objects.create(
                digest=digest,
                artifact_type=v.artifact_type,
                name=name[:500],
                raw=text,
                imported_by=user,
            )
            for digest, (name, text, v) in fresh.items()
        ]
        if stored:
            audit_record(
                actor=user, action="pitfall_artifacts_imported", public=True,
                reason=", ".join(f"{a.artifact_type} {a.digest[:12]}" for a in stored),
            )  # fmt: skip
    return stored
