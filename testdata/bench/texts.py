"""Texts beyond ASCII for timing pwe tokenize (BENCHMARKS.md, session 43).

usage: python3 testdata/bench/texts.py DIR

DIR must hold bench.txt (zstd -dc ../shared/data/bench-raw.txt.zst). Writes
in DIR: asc.txt (its first 400 000 lines), cyr.txt (the same lines with
Latin letters replaced by Cyrillic ones), fr.txt and fr_nfd.txt (400 000
lines of 12 French-like words, composed and in NFD), zh.txt (200 000 lines
of ideographs with Zipf-like frequencies).
"""
import os
import random
import sys
import unicodedata

d = sys.argv[1]
latin = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
cyrillic = "абвгдежзийклмнопрстуфхцчшщАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩ"
table = str.maketrans(latin, cyrillic)
with open(os.path.join(d, "bench.txt"), encoding="utf-8", errors="replace", newline="") as f, \
        open(os.path.join(d, "cyr.txt"), "w", encoding="utf-8", newline="") as c:
    for i, line in enumerate(f):
        if i >= 400000:
            break
        c.write(line.translate(table))
with open(os.path.join(d, "bench.txt"), "rb") as f, open(os.path.join(d, "asc.txt"), "wb") as a:
    for i, line in enumerate(f):
        if i >= 400000:
            break
        a.write(line)

random.seed(1)
letters = "abcdefghijklmnopqrstuvwxyz" * 3 + "éèêëàâäçîïôöùûüœæñ"
words = ["".join(random.choice(letters) for _ in range(random.randint(2, 10))) for _ in range(20000)]
with open(os.path.join(d, "fr.txt"), "w", encoding="utf-8") as f, \
        open(os.path.join(d, "fr_nfd.txt"), "w", encoding="utf-8") as g:
    for _ in range(400000):
        line = " ".join(random.choice(words) for _ in range(12))
        f.write(line + "\n")
        g.write(unicodedata.normalize("NFD", line) + "\n")

random.seed(2)
chars = [chr(0x4E00 + i) for i in range(0, 20000, 7)][:3000]
weights = [1.0 / (k + 1) for k in range(len(chars))]
with open(os.path.join(d, "zh.txt"), "w", encoding="utf-8") as f:
    for _ in range(200000):
        f.write("".join(random.choices(chars, weights, k=random.randint(10, 40))) + "。\n")
