from typing import Any

from django import template
from msgspec import UNSET

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
