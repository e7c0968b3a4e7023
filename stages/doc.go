// Package stages implements pwe's stages as units with a configuration, input
// files and output files: tokenize (text to vocabulary), count (text and
// vocabulary to pair counts), movielens (rating files to vocabulary and pair
// counts) and fit (pair counts to the MAP, posterior draws and summaries). Each stage's Config is one struct with
// documented fields, WithDefaults and Validate, filled alike by command-line
// flags, configuration files and library callers.
//
// The text stages read their inputs through formats/input, fan document
// batches out to one worker per thread, and write their output atomically through
// formats, recording the settings that determine the content, the input
// fingerprints and a summary in the file's metadata.
package stages
