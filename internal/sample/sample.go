// Package sample embeds pwe's default corpus: the first 3000 lines of Jane
// Austen's Sense and Sensibility (public domain; from Debian's
// r-cran-janeaustenr), about 27 000 words in blank-line-separated
// paragraphs. It lets README's first command run end to end on a fresh
// machine with nothing but Go, and gives tests a real text.
package sample

import _ "embed"

// Name is the input path under which the corpus is read, e.g.
// `pwe tokenize builtin:austen --doc-sep blank`.
const Name = "builtin:austen"

// AustenZst is the corpus, zstd-compressed.
//
//go:embed austen.txt.zst
var AustenZst []byte
