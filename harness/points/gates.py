"""Whether a judged set is a result: the judge's controls decide.

A judged set is ``usable`` only if the judge passed its own controls: the positive
control held on every answered point (its own Ground Truth called completely_correct),
its negative controls failed on at most ``NEGATIVE_FAILURE_SHARE_MAX`` of the points (an
empty answer called other_error; a wrong answer, and a wrong answer telling the judge to
pass it, never completely_correct), and its verdicts were stable when asked again: a
flip rate of at most ``FLIP_RATE_MAX`` and, where it is defined, Fleiss' kappa of at
least ``FLEISS_KAPPA_MIN``. A set that misses any rule is ``judge_unreliable``: its
verdicts are kept for audit, and nothing may rank them or show a figure of them
(``withheld_because``).

The defaults, and why:

- **Negative controls: at most 2% of points.** A control is built to be unambiguous (an
  empty answer; the Ground Truth with every number changed or its conclusion negated;
  the same with an instruction to pass it), so an honest judge fails one only where a
  point is odd; 2% leaves room for three such points of PITFALL's 174 and none of a
  suite under 50. A rubber stamp fails all of them, a gullible judge every injection.
- **Flip rate at most 0.15.** The share of re-judged answers whose repeated verdicts
  differ. With three judgments per answer, a judge that changes its call on about 5% of
  calls flips about 14% of items; one that changes 30% of its calls flips about 60%.
- **Kappa at least 0.6** ("substantial" agreement on Landis and Koch's scale) where it
  is defined. When every rating is one class kappa is undefined (chance agreement is
  total) and the stability rule rests on the flip rate alone.
"""

from __future__ import annotations

from typing import Any

NEGATIVE_FAILURE_SHARE_MAX = 0.02
FLIP_RATE_MAX = 0.15
FLEISS_KAPPA_MIN = 0.6
RULES = {
    "negative_control_failure_share_max": NEGATIVE_FAILURE_SHARE_MAX,
    "flip_rate_max": FLIP_RATE_MAX,
    "fleiss_kappa_min": FLEISS_KAPPA_MIN,
}
USABLE, UNRELIABLE = "usable", "judge_unreliable"
# a job whose positive control failed: no verdict of its judge is a figure either
CONTROL_FAILED = "control_failed"


def withheld_because(status: str, broken: list[str]) -> str | None:
    """Why a judged set shows no accuracy, interval, class distribution or pass@k
    anywhere: ``judge unreliable: <the rules it broke>`` when its judge failed its
    controls; None for a set whose figures may be shown. A failed judge's figures are
    not a weak result but none: a rubber stamp's 100% says nothing about the answers."""
    if status not in (UNRELIABLE, CONTROL_FAILED):
        return None
    return "judge unreliable: " + ("; ".join(broken) or "its controls failed")


def _share(part: int, whole: int) -> str:
    return f"{part} of {whole} point(s) ({100 * part / whole:.1f}%)" if whole else "no point"


def _negative_rule(failed: list[str], points: int) -> list[str]:
    if points and len(failed) / points <= NEGATIVE_FAILURE_SHARE_MAX:
        return []
    named = ", ".join(failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
    return [
        f"negative controls failed on {_share(len(failed), points)}; at most "
        f"{NEGATIVE_FAILURE_SHARE_MAX:.0%} may fail" + (f": {named}" if failed else "")
    ]


def _stability_rules(steady: dict[str, Any]) -> list[str]:
    if not steady["items"]:
        return ["stability not measured: no answer was re-judged without a judge error"]
    broken = []
    if steady["flip_rate"] > FLIP_RATE_MAX:
        broken.append(
            f"flip rate {steady['flip_rate']:.2f} over {steady['items']} re-judged answer(s); "
            f"at most {FLIP_RATE_MAX:.2f}"
        )
    kappa = steady["fleiss_kappa"]
    if kappa is not None and kappa < FLEISS_KAPPA_MIN:
        broken.append(f"Fleiss kappa {kappa:.2f}; at least {FLEISS_KAPPA_MIN:.2f}")
    return broken


def assess(controls: dict[str, Any], answered: list[str]) -> dict[str, Any]:
    """The judged set's ``reliability``: the rules, the figures they were applied to,
    each rule broken (worded), and the status, from the controls alone."""
    positive = controls["positive"]
    held = [i for i in answered if (positive.get(i) or {}).get("class") == "completely_correct"]
    failed = [n["point_id"] for n in controls["negative"] if n["flagged"]]
    steady = controls["stability"]
    broken = []
    if len(held) != len(answered):
        missed = [i for i in answered if i not in held]
        broken.append(f"positive control failed on {_share(len(missed), len(answered))}")
    broken += _negative_rule(failed, len(answered))
    broken += _stability_rules(steady)
    kappa = steady["fleiss_kappa"]
    return {
        "status": UNRELIABLE if broken else USABLE,
        "rules": dict(RULES),
        "figures": {
            "points": len(answered),
            "positive_controls_held": len(held),
            "negative_controls_failed": len(failed),
            "stability_items": steady["items"],
            "flip_rate": steady["flip_rate"],
            "fleiss_kappa": kappa,
            "fleiss_kappa_defined": kappa is not None,
        },
        "broken": broken,
    }
