// Package stages implements pwe's stages as units with a configuration, input
// files and output files: tokenize (text to vocabulary) and count (text and
// vocabulary to pair counts). Each stage's Config is one struct with
// documented fields, WithDefaults and Validate, filled alike by command-line
// flags, configuration files and library callers.
//
// A stage reads its inputs through formats/input, fans document batches out
// to one worker per thread, and writes its output atomically through
// formats, recording the settings that determine the content, the input
// fingerprints and a summary in the file's metadata.
package stages
