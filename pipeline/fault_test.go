package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pwe-project/pwe/internal/runlock"
)

// snapshot reads every file under dir except the staging directory and
// the cache of fingerprints.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == StagingDir {
			return filepath.SkipDir
		}
		// The cache of fingerprints is no output: a failed run may add the
		// fingerprints it made to it. Nor is the lock's note of its holder.
		if d.IsDir() || d.Name() == HashCacheFile || d.Name() == runlock.File {
			return nil
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, what string, before, after map[string][]byte) {
	t.Helper()
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("%s: %s changed", what, name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: new file %s", what, name)
		}
	}
}

// ranOnce runs the test configuration in a new directory and returns it
// with a snapshot of the run's files.
func ranOnce(t *testing.T) (Config, map[string][]byte) {
	t.Helper()
	cfg := loadConfig(t, t.TempDir(), config)
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	return cfg, snapshot(t, cfg.Output)
}

// TestRunFailedWriteKeepsPreviousOutputs makes the fit stage fail while
// writing its last file, draws.parquet, after it wrote the others: the
// previous outputs and the manifest stay byte-identical, and the manifest
// still describes the files on disk (the old configuration is up to date).
func TestRunFailedWriteKeepsPreviousOutputs(t *testing.T) {
	cfg, before := ranOnce(t)
	ctx := context.Background()

	// A non-empty directory where the fit's draws.parquet is to be renamed
	// makes that write fail, whoever runs the test (root ignores file
	// modes, so a read-only directory would not do).
	changed := cfg
	changed.Fit.Draws = 25
	obstacle := filepath.Join(cfg.staging("fit"), "draws.parquet")
	if err := os.MkdirAll(filepath.Join(obstacle, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx, changed, Options{})
	if err == nil || !strings.Contains(err.Error(), "draws.parquet") || !strings.HasPrefix(err.Error(), "fit: ") {
		t.Fatalf("run with an unwritable draws.parquet: %v", err)
	}
	// The fit writes its files one after the other; some are complete
	// when draws.parquet fails, else the test would test less than it
	// should.
	written := 0
	for _, f := range []string{"map.parquet", "summary.parquet", "sample_stats.parquet"} {
		if _, serr := os.Stat(filepath.Join(cfg.staging("fit"), f)); serr == nil {
			written++
		}
	}
	if written == 0 {
		t.Fatal("the fit failed before it wrote any other file")
	}
	sameFiles(t, "after the failed write", before, snapshot(t, cfg.Output))

	rep, err := Run(ctx, cfg, Options{})
	if err != nil || len(rep.Ran) != 0 {
		t.Fatalf("the old configuration after the failure: ran %v (%v), want nothing", rep.Ran, err)
	}
	if err := os.RemoveAll(obstacle); err != nil {
		t.Fatal(err)
	}
	rep, err = Run(ctx, changed, Options{})
	if err != nil || !slices.Equal(rep.Ran, []string{"fit"}) {
		t.Fatalf("after removing the fault: ran %v (%v), want fit", rep.Ran, err)
	}
	assertManifestMatchesFiles(t, cfg.Output)
}

// TestRunFailedPublishIsDetected fails the renames that publish a fit's
// outputs after the first one: some new files are in place, but the
// manifest is unchanged, so the next run sees outputs that do not match
// it and runs the fit again.
func TestRunFailedPublishIsDetected(t *testing.T) {
	dir := t.TempDir()
	cfg := loadConfig(t, dir, config)
	ctx := context.Background()
	if _, err := Run(ctx, cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(cfg.Output, ManifestFile)
	manBefore, _ := os.ReadFile(mpath)

	ssPath := filepath.Join(cfg.Output, FitDir, "sample_stats.parquet")
	ssBefore, _ := os.ReadFile(ssPath)
	injected := errors.New("injected rename failure")
	rename = func(from, to string) error {
		if filepath.Base(to) == "draws.parquet" {
			return injected
		}
		return os.Rename(from, to)
	}
	t.Cleanup(func() { rename = os.Rename })
	changed := cfg
	changed.Fit.Draws = 25
	if _, err := Run(ctx, changed, Options{}); !errors.Is(err, injected) {
		t.Fatalf("run with a failing publish: %v", err)
	}
	if ssAfter, _ := os.ReadFile(ssPath); bytes.Equal(ssBefore, ssAfter) {
		t.Fatal("sample_stats.parquet was not replaced before the failure: the test does not test a half-published stage")
	}
	rename = os.Rename
	if manAfter, _ := os.ReadFile(mpath); !bytes.Equal(manBefore, manAfter) {
		t.Errorf("manifest changed by a failed publish:\n%s\n---\n%s", manBefore, manAfter)
	}
	rep, err := Run(ctx, cfg, Options{})
	if err != nil || !slices.Equal(rep.Ran, []string{"fit"}) {
		t.Fatalf("after a half-published fit the old configuration ran %v (%v), want fit", rep.Ran, err)
	}
	assertManifestMatchesFiles(t, cfg.Output)
}

func assertManifestMatchesFiles(t *testing.T, dir string) {
	t.Helper()
	man, err := readManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range man.Stages {
		for _, fp := range r.Outputs {
			checkFingerprint(t, r.Name, fp)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, StagingDir)); !os.IsNotExist(err) {
		t.Errorf("staging directory left after a successful run: %v", err)
	}
}

// TestRunRerunsOnlyDownstream extends TestRunSkipRerunForce: a fit
// setting re-runs the fit alone, a changed corpus every stage, and a
// removed output the stage that wrote it and those whose inputs changed.
func TestRunRerunsOnlyDownstream(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1763726400")
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	text, err := os.ReadFile("../testdata/austen-200.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corpus, text, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, dir, strings.Replace(config, "../testdata/austen-200.txt", corpus, 1))
	ctx := context.Background()
	run := func(want ...string) {
		t.Helper()
		rep, err := Run(ctx, cfg, Options{})
		if err != nil || !slices.Equal(rep.Ran, want) {
			t.Fatalf("ran %v (%v), want %v", rep.Ran, err, want)
		}
	}
	run("tokenize", "count", "fit")
	cfg.Fit.PriorSD = 2
	run("fit")
	run()
	if err := os.WriteFile(corpus, append(text, "\n\nA new paragraph of the corpus.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	run("tokenize", "count", "fit")
	// With a fixed pwe.created_at the count stage writes the same bytes
	// again, so the fit, whose inputs are unchanged, is still up to date.
	if err := os.Remove(filepath.Join(cfg.Output, CountsFile)); err != nil {
		t.Fatal(err)
	}
	run("count")
	assertManifestMatchesFiles(t, cfg.Output)
}

// TestRunLocked: a run into a directory that another run holds is refused
// at once, naming the directory, and changes nothing there; once the
// other run ends, the same run goes ahead.
func TestRunLocked(t *testing.T) {
	cfg, before := ranOnce(t)
	ctx := context.Background()
	other, err := runlock.Acquire(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	changed := cfg
	changed.Fit.Draws = 25
	_, err = Run(ctx, changed, Options{Force: true})
	if !errors.Is(err, runlock.ErrInUse) || !strings.Contains(err.Error(), cfg.Output) {
		t.Fatalf("run into a locked directory: %v, want ErrInUse naming %s", err, cfg.Output)
	}
	sameFiles(t, "refused run", before, snapshot(t, cfg.Output))
	if _, err := os.Stat(filepath.Join(cfg.Output, StagingDir)); !os.IsNotExist(err) {
		t.Errorf("refused run made a staging directory: %v", err)
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	// Nor while pwe fit or summarize holds its fit directory.
	other, err = runlock.Acquire(filepath.Join(cfg.Output, FitDir))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, changed, Options{Force: true})
	if !errors.Is(err, runlock.ErrInUse) || !strings.Contains(err.Error(), filepath.Join(cfg.Output, FitDir)) {
		t.Fatalf("run while its fit directory is held: %v, want ErrInUse naming it", err)
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, changed, Options{})
	if err != nil || !slices.Equal(rep.Ran, []string{"fit"}) {
		t.Fatalf("after the other run: ran %v (%v), want fit", rep.Ran, err)
	}
}

// TestMoveAcrossFileSystems: where the rename fails as one across file
// systems does, the output is copied to its final name (under a temporary
// one first) and the staged file removed.
func TestMoveAcrossFileSystems(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "staged.html"), filepath.Join(dir, "site", "report.html")
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("<p>report</p>\n"), 10000)
	if err := os.WriteFile(from, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rename = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EXDEV}
	}
	t.Cleanup(func() { rename = os.Rename })
	if err := move(from, to); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(to); err != nil || !bytes.Equal(got, data) {
		t.Errorf("moved %d bytes (%v), want %d", len(got), err, len(data))
	}
	if _, err := os.Stat(from); err == nil {
		t.Error("the staged file is still there")
	}
	if left, _ := os.ReadDir(filepath.Dir(to)); len(left) != 1 {
		t.Errorf("the target directory holds %d files, want the report alone", len(left))
	}
	// Other errors are the rename's.
	rename = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EACCES}
	}
	if err := move(to, from); !errors.Is(err, syscall.EACCES) {
		t.Errorf("a refused rename: %v", err)
	}
}
