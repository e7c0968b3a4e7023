package stages

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/tokenize"
)

// TopOOVTokens is how many of the most frequent out-of-vocabulary tokens an
// append run reports.
const TopOOVTokens = 10

// TokenCount is a token and how often it occurred.
type TokenCount struct {
	Token string `json:"token"`
	Count int64  `json:"count"`
}

// ErrAppendMismatch is returned when the counts to append to were made with
// another vocabulary or other counting settings, so that summing would mix
// incompatible counts.
var ErrAppendMismatch = errors.New("stages: cannot append to counts made differently")

// appendTarget is the earlier counts of an append run.
type appendTarget struct {
	r      *formats.Reader[formats.CountRow]
	fp     input.Fingerprint
	inputs json.RawMessage // their pwe.inputs, which keys the run's seed
	// documents and tokens counted into them so far.
	documents, tokens int64
}

// openAppend opens the earlier counts and checks that they were made with
// the vocabulary vfp and cfg's counting settings. The count stage records
// the vocabulary as its last input, appended or not.
func openAppend(cfg CountConfig, vfp input.Fingerprint) (*appendTarget, error) {
	path := cfg.Append
	fp, err := input.FingerprintFile(path)
	if err != nil {
		return nil, err
	}
	r, err := formats.Open[formats.CountRow](path, formats.SchemaCounts)
	if err != nil {
		return nil, err
	}
	t := &appendTarget{r: r, fp: fp}
	if err := t.check(cfg, vfp); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func (t *appendTarget) check(cfg CountConfig, vfp input.Fingerprint) error {
	meta := t.r.Meta()
	rawConfig, _ := meta.Config.(json.RawMessage)
	t.inputs, _ = meta.Inputs.(json.RawMessage)
	var old CountConfig
	var inputs []input.Fingerprint
	if json.Unmarshal(rawConfig, &old) != nil || json.Unmarshal(t.inputs, &inputs) != nil || len(inputs) == 0 {
		return fmt.Errorf("%w: pwe.config or pwe.inputs missing or unreadable", ErrAppendMismatch)
	}
	// pwe split and pwe simulate write counts too, with other settings
	// and inputs: their last input is no vocabulary.
	var keys map[string]json.RawMessage
	if json.Unmarshal(rawConfig, &keys) != nil || keys["window"] == nil {
		return fmt.Errorf("%w: they were not written by pwe count (pwe split and pwe simulate write counts too), and only its counts grow by more text", ErrAppendMismatch)
	}
	if v := inputs[len(inputs)-1]; v.SHA256 != vfp.SHA256 || v.Size != vfp.Size {
		return fmt.Errorf("%w: they were counted with the vocabulary %s (%d bytes, sha256 %.12s…), this run uses %s (%d bytes, sha256 %.12s…)",
			ErrAppendMismatch, v.Path, v.Size, v.SHA256, vfp.Path, vfp.Size, vfp.SHA256)
	}
	old = old.WithDefaults()
	for _, s := range []struct {
		name     string
		was, now any
	}{
		{"window", old.Window, cfg.Window},
		{"weights", old.Weighting, cfg.Weighting},
		{"oov", old.OOV, cfg.OOV},
		{"subsample", old.Subsample, cfg.Subsample},
		{"negatives", *old.Negatives, *cfg.Negatives},
		{"neg-power", *old.NegPower, *cfg.NegPower},
		{"negatives-mode", old.NegativesMode, cfg.NegativesMode},
	} {
		if s.was != s.now {
			return fmt.Errorf("%w: they were counted with --%s %v, this run has %v", ErrAppendMismatch, s.name, s.was, s.now)
		}
	}
	var st struct {
		Documents      int64 `json:"documents"`
		Tokens         int64 `json:"tokens"`
		TotalDocuments int64 `json:"total_documents"`
		TotalTokens    int64 `json:"total_tokens"`
	}
	if raw, ok := meta.Stats.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("pwe.stats: %w", err)
		}
	}
	t.documents, t.tokens = st.Documents, st.Tokens
	if st.TotalDocuments > 0 || st.TotalTokens > 0 {
		t.documents, t.tokens = st.TotalDocuments, st.TotalTokens
	}
	return nil
}

// AppendSeed is the seed with which an append run subsamples and draws the
// negatives of the new corpus: the first 8 bytes (little-endian) of the
// SHA-256 of seed (8 bytes, little-endian) followed by the earlier counts'
// pwe.inputs. Negatives are keyed by (seed, target), so drawing with the
// earlier run's seed would repeat its random streams; keying the seed to the
// earlier inputs keeps every append's draws independent of those already
// summed, even when every run uses the same --seed, and reruns reproducible.
func AppendSeed(seed uint64, earlierInputs []byte) uint64 {
	h := sha256.New()
	h.Write(binary.LittleEndian.AppendUint64(nil, seed))
	h.Write(earlierInputs)
	return binary.LittleEndian.Uint64(h.Sum(nil))
}

// oovTally counts an append run's out-of-vocabulary tokens by name, for
// the most frequent of them in the stage summary. Like tokenize's tables,
// its tables stay within a memory limit: one past its share spills as a
// run to the temporary directory, and the runs give the same tokens.
type oovTally struct {
	runs   *tokenize.Runs
	limit  int64 // bytes of every table together
	tables []*tokenize.Counter
}

// oovShare is the part of count's budget an append run's tally takes.
const oovShare = 8

func newOOVTally(dir string, limit int64, tables int) *oovTally {
	o := &oovTally{runs: tokenize.NewRuns(dir), limit: limit, tables: make([]*tokenize.Counter, tables)}
	for i := range o.tables {
		o.tables[i] = tokenize.NewCounter()
	}
	return o
}

// table returns table i, which one goroutine at a time may use.
func (o *oovTally) table(i int) *tokenize.Counter { return o.tables[i] }

// bound spills table i if it takes more than its equal share of the limit.
func (o *oovTally) bound(i int) error {
	c := o.tables[i]
	if c.Footprint() <= o.limit/int64(len(o.tables)) {
		return nil
	}
	if err := o.runs.Spill(c); err != nil {
		return err
	}
	c.Reset()
	return nil
}

// top returns the TopOOVTokens most frequent tokens, ties in byte order.
func (o *oovTally) top() ([]TokenCount, error) {
	var entries []tokenize.Entry
	if o.runs.Len() == 0 {
		all := o.tables[0]
		for _, c := range o.tables[1:] {
			all.Merge(c)
		}
		entries = all.Vocabulary(TopOOVTokens, 1)
	} else {
		for _, c := range o.tables {
			if err := o.runs.Spill(c); err != nil {
				return nil, err
			}
			c.Reset()
		}
		var err error
		if entries, _, err = o.runs.Vocabulary(TopOOVTokens, 1, o.limit); err != nil {
			return nil, err
		}
	}
	var out []TokenCount
	for _, e := range entries {
		out = append(out, TokenCount{Token: e.Token, Count: e.Count})
	}
	return out, nil
}

// Close removes the runs' files.
func (o *oovTally) Close() error { return o.runs.Close() }
