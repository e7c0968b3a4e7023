package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestGlobalFlags checks --quiet, --log-format and --progress before and
// after the command name, and that the exit codes do not change.
func TestGlobalFlags(t *testing.T) {
	dir := t.TempDir()
	vocab := filepath.Join(dir, "v.parquet")
	corpus := "../../testdata/kjv-150.txt"
	for _, args := range [][]string{
		{"--quiet", "tokenize", corpus, "-o", vocab},
		{"tokenize", corpus, "-o", vocab, "--quiet"},
		{"--progress", "never", "tokenize", "--quiet", corpus, "-o", vocab},
	} {
		stdout, stderr, code := runPwe(args...)
		if code != exitOK || stderr != "" || stdout != "" {
			t.Errorf("pwe %v: exit %d, stdout %q, stderr %q; want exit 0 and silence", args, code, stdout, stderr)
		}
	}
	// Errors still appear under --quiet.
	_, stderr, code := runPwe("--quiet", "tokenize", "/no/such/file.txt", "-o", vocab)
	if code != exitRuntime || !strings.HasPrefix(stderr, "pwe: tokenize: ") || !strings.Contains(stderr, "/no/such/file.txt") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("quiet failure: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runPwe("tokenize", corpus, "--quiet", "--bogus")
	if code != exitUsage || !strings.Contains(stderr, "bogus") {
		t.Errorf("quiet usage error: exit %d, stderr %q", code, stderr)
	}

	// Without --quiet, the summary is one text line; with --log-format
	// json, every line is JSON and the summary carries the stats.
	_, stderr, code = runPwe("tokenize", corpus, "-o", vocab, "--max-vocab", "30")
	if code != exitOK || !strings.HasPrefix(stderr, "tokenize: ") || !strings.Contains(stderr, "vocabulary 30 tokens") {
		t.Errorf("text summary: exit %d, %q", code, stderr)
	}
	for _, args := range [][]string{
		{"--log-format", "json", "tokenize", corpus, "-o", vocab, "--max-vocab", "30"},
		{"tokenize", corpus, "-o", vocab, "--max-vocab", "30", "--log-format=json"},
	} {
		_, stderr, code = runPwe(args...)
		if code != exitOK {
			t.Fatalf("pwe %v: exit %d %s", args, code, stderr)
		}
		var found bool
		sc := bufio.NewScanner(strings.NewReader(stderr))
		for sc.Scan() {
			var rec struct {
				Level, Stage string
				Stats        *struct {
					Tokens    int64 `json:"tokens"`
					VocabSize int   `json:"vocab_size"`
				}
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("pwe %v: stderr line is not JSON: %v\n%s", args, err, sc.Text())
			}
			if rec.Stats != nil {
				found = rec.Stage == "tokenize" && rec.Level == "INFO" && rec.Stats.VocabSize == 30 && rec.Stats.Tokens > 0
			}
		}
		if !found {
			t.Errorf("pwe %v: no summary record with the stats:\n%s", args, stderr)
		}
	}
	_, stderr, code = runPwe("--log-format", "json", "tokenize", "/no/such/file.txt", "-o", vocab)
	var rec struct{ Level, Msg string }
	if err := json.Unmarshal([]byte(stderr), &rec); code != exitRuntime || err != nil || rec.Level != "ERROR" || !strings.Contains(rec.Msg, "/no/such/file.txt") {
		t.Errorf("JSON error: exit %d, %q (%v)", code, stderr, err)
	}

	for _, args := range [][]string{
		{"--progress", "sometimes", "version"},
		{"tokenize", corpus, "-o", vocab, "--log-format", "xml"},
		{"--log-format", "json", "frobnicate"},
	} {
		_, stderr, code := runPwe(args...)
		if code != exitUsage || stderr == "" {
			t.Errorf("pwe %v: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
	stdout, _, code := runPwe("tokenize", "--help")
	if code != exitOK || !strings.Contains(stdout, "global flags") || !strings.Contains(stdout, "--log-format") {
		t.Errorf("tokenize --help lacks the global flags:\n%s", stdout)
	}
}
