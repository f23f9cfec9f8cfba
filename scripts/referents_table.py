"""Write tools/propeval/dedup/referents.json: the country names, demonyms and month names that the
dedup veto (propeval.dedup.evidence) reads, from maintained data, so the veto needs no library at run
time (the commit hook stays light and loads it in a millisecond).

    python scripts/referents_table.py          # rewrite the table
    python scripts/referents_table.py --check  # exit 1 when the shipped table differs

Sources:

* Unicode CLDR through babel: each country's name, and each month's name (format and stand-alone,
  wide and abbreviated), in every language of LANGUAGES.
* countryinfo: each country's English name, alternative spellings and English demonym ("Chinese",
  "American", "Ukrainian"): CLDR has no demonyms. In the languages of LANGUAGES other than English a
  demonym is a lower-case adjective ("китайский", "chinesisch"), which the veto never reads as a name.
* EXTRA below, written by hand: what neither has (local acronyms such as США, КНР, РФ; USSR).

A form that two sources give to two different countries (or months) is left out: it names neither.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tools" / "propeval" / "dedup" / "referents.json"
# The languages whose month and country names are read: those of the starter corpus, the calibration
# data and the encoders' common ones. Languages written without capitals (zh, ja) are here for dates.
LANGUAGES = (
    "en", "ru", "uk", "be", "zh", "zh_Hant", "ja", "es", "ca", "eu", "gl", "de", "fr", "it", "pt", "pl", "cs",
    "tr", "kk",
)  # fmt: skip
# Acronyms and short names no library lists, by ISO 3166 code (SU: the Soviet Union, reserved).
EXTRA = {
    "US": ["USA", "U.S.", "U.S.A.", "America", "США", "Америка", "EEUU", "EE. UU.", "EE.UU."],
    "GB": ["UK", "U.K.", "Britain", "Great Britain", "Британия", "Британія"],
    "CN": ["PRC", "КНР"],
    "RU": ["РФ", "Russian Federation"],
    "SU": ["USSR", "Soviet Union", "СССР", "СРСР", "Советский Союз", "Радянський Союз", "UdSSR", "URSS"],
    "EU": ["EU", "ЕС", "ЄС", "UE"],
    "KP": ["DPRK", "КНДР"],
}


def fold(text: str) -> str:
    return " ".join(text.replace("ё", "е").replace("Ё", "Е").casefold().rstrip(".").split())


def build() -> dict[str, object]:
    from babel import Locale
    from countryinfo import all_countries  # type: ignore[import-untyped]

    countries: dict[str, set[str]] = defaultdict(set)
    codes: dict[str, set[str]] = defaultdict(set)
    months: dict[str, set[int]] = defaultdict(set)
    for lang in LANGUAGES:
        loc = Locale.parse(lang)
        for code, name in loc.territories.items():
            if len(code) == 2 and code.isalpha() and code not in {"ZZ", "QO", "XA", "XB"}:
                countries[fold(name)].add(code)
        for context in ("format", "stand-alone"):
            # wide names only: abbreviations are words too ("ago", "set", "gen")
            for number, name in loc.months[context]["wide"].items():
                if not any(ch.isdigit() for ch in name):  # "6月" is matched by the date pattern
                    name = fold(name)
                    months[name.removeprefix("de ").removeprefix("d’").removeprefix("d'")].add(number)
    population: dict[str, int] = {}
    for info in all_countries():
        data = info.info()
        iso = data.get("ISO") or {}
        code = iso.get("alpha2")
        if not code:
            continue
        population[code] = int(data.get("population") or 0)
        for form in [data.get("name"), data.get("demonym"), *(data.get("altSpellings") or [])]:
            if not isinstance(form, str) or not form:
                continue
            if form.isupper() and form.isalpha():
                codes[form].add(code)
            else:
                countries[fold(form)].add(code)
        for key in ("alpha2", "alpha3"):
            if iso.get(key):
                codes[iso[key]].add(code)
    for code, forms in EXTRA.items():
        for form in forms:
            if form.isupper() and form.isalpha():
                codes[form].add(code)
            else:
                countries[fold(form)].add(code)
    # A code-like form (all capitals) goes to codes only: "IT" or "AM" in lower case are words.
    out_countries = {}
    for form, cands in sorted(countries.items()):
        if form.isascii() and len(form) <= 2:
            continue
        if len(cands) > 1:  # "Chinese" (China, Hong Kong, Macao): the far most populous, or none
            ranked = sorted(cands, key=lambda c: -population.get(c, 0))
            if population.get(ranked[0], 0) < 10 * max(1, population.get(ranked[1], 0)):
                continue
            cands = {ranked[0]}
        out_countries[form] = next(iter(cands))
    out_codes = {f: next(iter(c)) for f, c in sorted(codes.items()) if len(c) == 1}
    out_months = {f: next(iter(m)) for f, m in sorted(months.items()) if len(m) == 1 and len(f) > 2}
    return {
        "about": "Generated by scripts/referents_table.py from Unicode CLDR (babel), countryinfo and its EXTRA list.",
        "languages": list(LANGUAGES),
        "countries": out_countries,
        "codes": out_codes,
        "months": out_months,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the shipped table; exit 1 on a difference")
    args = ap.parse_args()
    text = json.dumps(build(), ensure_ascii=False, indent=0, sort_keys=True) + "\n"
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("referents.json is up to date" if same else "referents.json differs: run scripts/referents_table.py")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
