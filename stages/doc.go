// Package stages implements pwe's stages as units with a configuration,
// input files and output files. Each stage's Config is one struct with
// documented fields, WithDefaults and Validate, filled alike by
// command-line flags, configuration files and library callers, and each
// stage is one function, Stage(ctx, cfg) (Stats, error):
//
//	Tokenize   text                      -> vocab.parquet
//	Count      text, vocab.parquet       -> counts.parquet (or, with Append, its sum with earlier counts)
//	MovieLens  MovieLens ratings, titles -> vocab.parquet, counts.parquet
//	Fit        counts, vocab             -> map.parquet, draws.parquet, sample_stats.parquet, summary.parquet
//	           (Method "gibbs"; "map" writes map.parquet only; "laplace" draws
//	           from the Gaussian approximation at the MAP instead of sampling)
//	Summarize  fit directory             -> similarity.parquet, neighbours.parquet
//	Export     fit directory             -> word2vec text or Parquet point estimates (posterior mean or MAP)
//	Report     fit directory             -> report.html
//	Simulate   settings                  -> vocab.parquet, counts.parquet, truth.parquet
//	Split      counts.parquet            -> train.parquet, test.parquet
//	Evaluate   fit directory, truth or held-out counts -> evaluation.parquet
//
// The text stages read their inputs through formats/input, fan document
// batches out to one worker per thread, and report the raw bytes they read
// to an optional ReadProgress (as does MovieLens, over its passes). Every
// stage writes its outputs atomically through formats, recording the
// settings that determine the content, the input fingerprints and a
// summary in the file's metadata; vocabularies and counts can also travel
// as Arrow streams on standard input and output (StdioPath).
//
// A Gibbs fit keeps its draws on disk while it runs (one spill file per
// chain) and, unless CheckpointInterval is NoCheckpoints, each chain's
// state in Output/checkpoint, so that a fit interrupted by a signal or a
// crash continues with FitConfig.Resume and writes the bytes an
// uninterrupted fit would have (FitCheckpointMatches says whether a
// checkpoint fits a configuration; pipeline uses it to resume by itself).
package stages
