// Package pipeline runs pwe's stages in order from one configuration file,
// decides which are up to date, and records what it did in a manifest.
//
//	            text corpus                      MovieLens ratings
//	                 |                                   |
//	          +------+------+                            |
//	          v             |                            v
//	     [tokenize]         |                      [movielens]
//	          |             v                            |
//	   vocab.parquet ---> [count]                        |
//	          |             |                            |
//	          |      counts.parquet   <------------------+ (vocab.parquet, counts.parquet)
//	          |             |
//	          +-----> [fit] <
//	                    |
//	fit/map.parquet, fit/draws.parquet, fit/sample_stats.parquet,
//	fit/summary.parquet
//
// Every stage has a key: the hash of its settings (those that determine its
// output, seed included) and the fingerprints (size and SHA-256) of its
// inputs. A stage whose key matches the manifest's record and whose outputs
// still have the recorded fingerprints is skipped; a changed setting or
// input re-runs that stage, which changes its outputs and so re-runs every
// stage downstream of it. Each stage writes its outputs under temporary
// names and renames them when complete, and the manifest is rewritten
// (atomically) after every stage, so an interrupted run leaves the previous
// outputs intact and the manifest truthful.
package pipeline
