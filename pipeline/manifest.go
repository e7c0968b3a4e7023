package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/atomicfile"
)

// ManifestFile is the manifest's name inside the output directory.
const ManifestFile = "manifest.json"

// Manifest records what a run did, stage by stage.
type Manifest struct {
	Stages []StageRecord `json:"stages"`
}

// StageRecord is one stage's entry in the manifest.
type StageRecord struct {
	Name string `json:"name"`
	// Key hashes the settings and the input fingerprints; a stage whose key
	// and outputs are unchanged is up to date.
	Key      string              `json:"key"`
	Settings json.RawMessage     `json:"settings"`
	Seed     uint64              `json:"seed"`
	Inputs   []input.Fingerprint `json:"inputs"`
	Outputs  []input.Fingerprint `json:"outputs"`
	Version  string              `json:"pwe_version"`
	Start    time.Time           `json:"start"`
	End      time.Time           `json:"end"`
	Seconds  float64             `json:"seconds"`
	// PeakRSS is the process's peak resident memory in bytes at the end of
	// the stage (the peak of the whole run so far).
	PeakRSS int64 `json:"peak_rss_bytes"`
	Stats   any   `json:"stats,omitempty"`
}

func (m *Manifest) find(name string) *StageRecord {
	for i := range m.Stages {
		if m.Stages[i].Name == name {
			return &m.Stages[i]
		}
	}
	return nil
}

// set replaces the record of rec.Name, or appends it.
func (m *Manifest) set(rec StageRecord) {
	if old := m.find(rec.Name); old != nil {
		*old = rec
		return
	}
	m.Stages = append(m.Stages, rec)
}

// remove drops the record of the named stage.
func (m *Manifest) remove(name string) {
	m.Stages = slices.DeleteFunc(m.Stages, func(r StageRecord) bool { return r.Name == name })
}

// readManifest reads the manifest of a previous run; a missing file gives
// an empty manifest.
func readManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Manifest{}, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it or run with --force)", path, err)
	}
	return &m, nil
}

func (m *Manifest) write(path string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(append(data, '\n')); err != nil {
		return err
	}
	return f.Commit()
}
