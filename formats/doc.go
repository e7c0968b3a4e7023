// Package formats defines pwe's file formats: the Parquet schemas of every
// stage's output, the key-value metadata each file carries, and typed readers
// and writers for them. Sub-packages read the inputs: input (text corpora,
// compressed or not) and movielens (rating files).
//
// Every output is zstd-compressed Parquet written under a temporary name and
// renamed when complete (internal/atomicfile), so a failed run leaves the
// previous file intact.
//
// Between processes (the path "-"), vocabularies and counts travel as Arrow
// IPC streams with the same columns and types, in record batches of
// StreamBatchRows. The schema carries the metadata below; an empty trailer
// batch carries pwe.stats and the row count. A writer that fails never
// sends the end-of-stream marker, so the reader reports the stream as
// truncated (ErrTruncated, with the batch and row) instead of taking part
// of it for the whole.
//
// # Metadata
//
// Each file records, as Parquet key-value metadata:
//
//	pwe.schema      name and version of the schema, e.g. "pwe.counts/1"
//	pwe.version     the pwe version that wrote it
//	pwe.created_at  RFC 3339 time of writing (SOURCE_DATE_EPOCH, when set,
//	                fixes it, so that reruns can be compared byte for byte)
//	pwe.config      JSON of the stage settings that determine the content,
//	                seed included; execution settings (threads, memory,
//	                temporary directory) are left out because they do not
//	                change the content
//	pwe.inputs      JSON list of the input fingerprints (path, size, sha256)
//	pwe.stats       JSON of the stage's summary (counts of documents, tokens,
//	                replaced invalid UTF-8 sequences, ...)
package formats
