package stages

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestZeroIsUnset checks ZeroIsUnset against the configurations' defaults:
// every numeric setting with a configuration key that WithDefaults changes
// from zero must be listed, unless zero and its default mean the same, and
// every listed key must name such a setting.
func TestZeroIsUnset(t *testing.T) {
	configs := map[string]any{
		"tokenize":  TokenizeConfig{},
		"count":     CountConfig{},
		"movielens": MovieLensConfig{},
		"fit":       FitConfig{},
		"summarize": SummarizeConfig{},
		"report":    ReportConfig{},
		"simulate":  SimulateConfig{},
		"export":    ExportConfig{},
		"evaluate":  EvaluateConfig{},
	}
	// Not listed: where zero and the default mean the same (a token seen at
	// all is seen at least once; no optimiser limit is the documented 20000
	// iterations), anchor sweeps (unused when the anchors are fixed at the
	// MAP, where WithDefaults sets 0 itself), and the Zipf shift, replaced
	// only along with an unset exponent (a shift of 0 is pure Zipf).
	exempt := map[string]bool{"tokenize.min_count": true, "fit.map_max_iter": true, "fit.anchor_sweeps": true, "simulate.zipf_b": true}
	for stage := range ZeroIsUnset {
		if _, ok := configs[stage]; !ok {
			t.Errorf("ZeroIsUnset lists stage %q, which has no configuration here", stage)
		}
	}
	for stage, cfg := range configs {
		typ := reflect.TypeOf(cfg)
		defaulted := reflect.ValueOf(cfg).MethodByName("WithDefaults").Call(nil)[0]
		var changed []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch f.Type.Kind() {
			case reflect.Int, reflect.Int64, reflect.Float64:
			default:
				continue
			}
			if key == "" || key == "-" || defaulted.Field(i).IsZero() || exempt[stage+"."+key] {
				continue
			}
			changed = append(changed, key)
		}
		listed := slices.Clone(ZeroIsUnset[stage])
		slices.Sort(changed)
		slices.Sort(listed)
		if !slices.Equal(changed, listed) {
			t.Errorf("%s: WithDefaults replaces zero in %v; ZeroIsUnset lists %v", stage, changed, listed)
		}
	}
}
