import re
from datetime import UTC, date, datetime
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from msgspec import UNSET

from pitweb.runs import presentation, selectors

register = template.Library()


@register.filter
def known(value: Any) -> Any:
    """A field a receipt body may leave out (``UNSET``) as nothing, like a missing key."""
    return "" if value is UNSET else value


@register.filter
def get_item(mapping: dict[str, Any], key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


def _percent(value: Any) -> float | None:
    """A fraction as percent, or None for none or not a number."""
    if value is None or value == "":
        return None
    try:
        return float(value) * 100 + 0.0  # + 0.0: no "-0.00"
    except (TypeError, ValueError):
        return None


@register.filter
def pct(value: Any, places: int = 2) -> str:
    """A fraction as a percentage (0.0123 -> "1.23%"); "n/a" for none."""
    number = _percent(value)
    return "n/a" if number is None else f"{number:.{int(places)}f}%"


@register.filter
def pp(value: Any, places: int = 2) -> str:
    """A difference of fractions in percentage points, signed (0.004 -> "+0.40 pp")."""
    number = _percent(value)
    return "n/a" if number is None else f"{number:+.{int(places)}f} pp"


@register.filter
def short_sha(value: Any) -> str:
    return str(value or "").removeprefix("sha256:")[:12]


@register.filter
def level(value: Any) -> str:
    """A confidence as a percentage, with only the places it needs (95%, 99.74%)."""
    if value is None:
        return "—"
    return f"{float(value) * 100:.2f}".rstrip("0").rstrip(".") + "%"


@register.filter
def when(value: Any) -> str:
    """A time to the second, in UTC ("2023-03-01 14:05:09 UTC"), never with microseconds;
    a date as a date; an ISO string read first; nothing as "—"."""
    if value is None or value == "" or value is UNSET:
        return "—"
    moment: object = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(moment, datetime):
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC)
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(moment, date):
        return moment.isoformat()
    return str(moment)


@register.filter
def words(value: Any) -> str:
    """A closed value (a state, a verdict, an error class) in words, never snake_case."""
    return presentation.words(value)


@register.filter
def agent(value: Any) -> SafeString:
    """An agent by its name, its module path (if it has one) on hover."""
    path = str(value or "")
    name = presentation.agent_name(path)
    if name == path:
        return format_html("{}", name)
    return format_html('<span class="abbr" title="{}">{}</span>', path, name)


_BREAK = re.compile(r"[\s_\-.:/,]")


@register.filter
def clip(value: Any, limit: int = 40) -> SafeString:
    """A label cut at a word boundary, never inside a word, within ``limit`` characters,
    with the whole label on hover; a short one as it is."""
    text = str(value or "")
    if len(text) <= int(limit):
        return format_html("{}", text)
    head = text[: int(limit)]
    cuts = [m.start() for m in _BREAK.finditer(text[: int(limit) + 1])]
    cut = cuts[-1] if cuts and cuts[-1] > int(limit) // 3 else int(limit)
    return format_html('<span class="abbr" title="{}">{}…</span>', text, head[:cut].rstrip())


@register.filter
def any_of(rows: Any, key: str) -> bool:
    """Whether any row (a mapping) holds a true ``key``: a column only some rows fill."""
    return any(isinstance(r, dict) and r.get(key) for r in rows or ())


@register.filter
def distinct_of(rows: Any, key: str) -> list[Any]:
    """The different values of ``key`` over rows (mappings), in order, blanks left out."""
    return list(dict.fromkeys(r.get(key) for r in rows or () if isinstance(r, dict) and r.get(key)))


@register.simple_tag
def holdout_models(release: Any) -> list[dict[str, Any]]:
    """The declared models ``release`` is a holdout for (``selectors.holdout_models``):
    the release's page lists them, while the releases app never imports runs."""
    return selectors.holdout_models(release.pk)
