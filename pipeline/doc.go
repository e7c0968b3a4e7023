// Package pipeline runs pwe's stages in order from one configuration file,
// decides which are up to date, and records what it did in a manifest.
//
//	            text corpus                      MovieLens ratings
//	                 |                                   |
//	          |                                          |
//	          v                                          v
//	     [tokenize]                                [movielens]
//	          |                                          |
//	   vocab.parquet,                                    |
//	   tokens.bin  -----> [count]                        |
//	          |             |                            |
//	          |      counts.parquet   <------------------+ (vocab.parquet, counts.parquet)
//	          |             |
//	          +-----> [fit] <
//	                    |
//	fit/map.parquet, fit/draws.parquet, fit/sample_stats.parquet,
//	fit/summary.parquet
//	                    |
//	              [summarize]  (when pairs or neighbours are configured)
//	                    |
//	fit/similarity.parquet, fit/neighbours.parquet
//	                    |
//	               [report]    (when report is set)
//	                    |
//	               report.html
//
// # Up to date
//
// Every stage has a key: the hash of its settings (those that determine its
// output, seed included) and the fingerprints (size and SHA-256) of its
// inputs. A stage whose key matches the manifest's record and whose outputs
// still have the recorded fingerprints is skipped; a changed setting or
// input re-runs that stage, which changes its outputs and so re-runs every
// stage downstream of it.
//
// # Staging
//
// A stage writes its files into DIR/.pwe-staging/STAGE/, and Run renames
// them into place only once the stage has succeeded; the manifest is
// rewritten (atomically) after that. A stage that fails or is interrupted,
// even halfway through writing its files, so leaves the previous outputs
// and the manifest describing them as they were. The staging directory of
// a stage depends only on DIR and the stage's name, so a stage run again
// finds what it left there; it is removed once its files are published.
//
// # Resuming a fit
//
// The fit's checkpoint lives in its staging directory
// (DIR/.pwe-staging/fit/checkpoint/, beside the spilled draws). When the
// run is interrupted (a signal cancels the context) every chain saves its
// last completed sweep there; the next Run of the same configuration finds
// the checkpoint, checks with stages.FitCheckpointMatches that it was made
// from the same inputs, settings and pwe version, and continues the chains
// where they stopped, logging "resuming the interrupted fit". The draws and
// summary are then the bytes of an uninterrupted run (with
// SOURCE_DATE_EPOCH set). Options.Force starts the fit over.
//
// # Messages and progress
//
// Run reports through a Reporter (log/slog, as text or JSON lines): a
// record per stage with its figures under StatsKey, and the progress of
// the long stages: tokenize, count and movielens in raw bytes read (the
// total is the inputs' stored size, or unknown on standard input) and the
// fit in sweeps (a resumed fit starts at the sweeps already done). pwe's
// commands run those stages through the same functions as Run (Tokenize,
// Count, MovieLens and Fit), which report their progress and warnings.
package pipeline
