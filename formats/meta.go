package formats

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pwe-project/pwe/internal/version"
)

// Metadata keys written into every pwe Parquet file.
const (
	KeySchema    = "pwe.schema"
	KeyVersion   = "pwe.version"
	KeyCreatedAt = "pwe.created_at"
	KeyConfig    = "pwe.config"
	KeyInputs    = "pwe.inputs"
	KeyStats     = "pwe.stats"
)

// Meta is the key-value metadata of a pwe file. Config, Inputs and Stats are
// marshalled to JSON when writing; when reading they hold json.RawMessage.
type Meta struct {
	Schema    string
	Version   string
	CreatedAt string
	Config    any
	Inputs    any
	Stats     any
}

// pairs returns the metadata as key-value pairs, filling Version and
// CreatedAt when they are empty.
func (m Meta) pairs() ([][2]string, error) {
	if m.Version == "" {
		m.Version = version.String()
	}
	if m.CreatedAt == "" {
		m.CreatedAt = Now().Format(time.RFC3339)
	}
	kv := [][2]string{{KeySchema, m.Schema}, {KeyVersion, m.Version}, {KeyCreatedAt, m.CreatedAt}}
	for _, f := range []struct {
		key string
		v   any
	}{{KeyConfig, m.Config}, {KeyInputs, m.Inputs}, {KeyStats, m.Stats}} {
		if f.v == nil {
			continue
		}
		v, err := metaJSON(f.key, f.v)
		if err != nil {
			return nil, err
		}
		kv = append(kv, [2]string{f.key, v})
	}
	return kv, nil
}

// metaJSON encodes the value of metadata key, as every writer stores
// pwe.config, pwe.inputs and pwe.stats.
func metaJSON(key string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("formats: metadata %s: %w", key, err)
	}
	return string(b), nil
}

// Now returns the time recorded as pwe.created_at: the current UTC time, or
// SOURCE_DATE_EPOCH (seconds since 1970) when that variable is set, the
// convention of reproducible builds.
func Now() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if sec, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return time.Unix(sec, 0).UTC()
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}
