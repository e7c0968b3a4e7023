package stages

// ZeroIsUnset lists, by stage, the settings (by their configuration-file
// keys) whose zero value WithDefaults reads as "not set" and replaces by the
// default. A zero given explicitly, on the command line or in a
// configuration file, must be refused there: otherwise `--window 0` would
// count with a window of 5, unannounced. The stages themselves cannot tell
// an explicit zero from an unset field.
var ZeroIsUnset = map[string][]string{
	"count":     {"window"},
	"movielens": {"min_rating"},
	"fit":       {"dim", "map_starts", "chains", "draws", "thin", "inner", "prior_sd"},
	"summarize": {"top"},
	"report":    {"max_pairs"},
	"simulate":  {"zipf_a", "snr"},
}
