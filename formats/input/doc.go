// Package input opens the corpora that pwe's tokenize and count stages read
// and splits them into documents.
//
// Arguments are expanded into files (Expand), each file is opened with
// transparent gzip, zstd or bzip2 decompression detected from its magic bytes
// (Open), and a Reader yields documents one at a time (Next) or in batches
// that own their text and can be handed to worker goroutines (NextBatch).
// Three formats are understood:
//
//   - Text: a document is a line, with DocSep "blank" a paragraph of lines
//     separated by blank lines, or with DocSep "file" a whole input (a
//     file, an archive's member or a WARC record).
//   - JSONL: one JSON object per line; the document is a named top-level
//     string field.
//   - Parquet: the document is a named string column, read one page at a
//     time so memory does not grow with the file.
//
// While it reads, the package fingerprints every input (size and SHA-256 of
// the raw bytes) so that pipeline manifests can record what an output was
// made from.
package input
