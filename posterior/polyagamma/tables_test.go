package polyagamma

import (
	"os"
	"os/exec"
	"testing"
)

// lazyEnv names, in a child test process, the exported function that must
// fill the tables by itself.
const lazyEnv = "PWE_POLYAGAMMA_LAZY"

// The tests call unexported functions that read the tables; a child of
// TestTablesFilledOnUse does not.
func init() {
	if os.Getenv(lazyEnv) == "" {
		ready()
	}
}

// TestTablesFilledOnUse calls each exported function that reads the
// tables first in a process of its own, and checks that the tables are
// filled after it.
func TestTablesFilledOnUse(t *testing.T) {
	calls := map[string]func(){
		"Mean": func() { Mean(1, 0.5) },
		"Var":  func() { Var(1, 0.5) },
		"CDF":  func() { CDF(1, 0.5, 0.2) },
		"Rand": func() { Sampler{Src: NewXoshiro(1, 2)}.Rand(1, 0.5) },
		"Fill": func() {
			Sampler{Src: NewXoshiro(1, 2)}.Fill(make([]float64, 1), []float64{1}, []float64{0.5})
		},
	}
	if name := os.Getenv(lazyEnv); name != "" {
		if altTTable != nil {
			t.Fatal("the tables were filled before any call")
		}
		calls[name]()
		if altTTable == nil || pLeftTable == nil || hSeries[0][0] == 0 || moderateCMax[maxModerate] == 0 {
			t.Fatalf("%s left the tables empty", name)
		}
		return
	}
	for name := range calls {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTablesFilledOnUse$", "-test.count=1")
		cmd.Env = append(os.Environ(), lazyEnv+"="+name)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
}
