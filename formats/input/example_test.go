package input_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pwe-project/pwe/formats/input"
)

func Example() {
	dir, err := os.MkdirTemp("", "corpus")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	text := "It is a truth universally acknowledged,\r\nthat a single man\r\n\r\nmust be in want of a wife.\r\n"
	if err := os.WriteFile(filepath.Join(dir, "austen.txt"), []byte(text), 0o644); err != nil {
		log.Fatal(err)
	}

	paths, err := input.Expand([]string{dir})
	if err != nil {
		log.Fatal(err)
	}
	r := input.NewReader(paths, input.Options{DocSep: input.DocSepBlank})
	defer r.Close()
	for r.Next() {
		d := r.Doc()
		fmt.Printf("%s:%d: %q\n", filepath.Base(d.Path), d.Line, d.Text)
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// austen.txt:1: "It is a truth universally acknowledged,\nthat a single man"
	// austen.txt:4: "must be in want of a wife."
}

func ExampleReader_NextBatch() {
	dir, err := os.MkdirTemp("", "corpus")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	lines := `{"text": "one"}
{"text": "two"}
{"text": null}
{"text": "three"}
`
	path := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		log.Fatal(err)
	}

	r := input.NewReader([]string{path}, input.Options{TextField: "text"})
	defer r.Close()
	var b input.Batch
	for r.NextBatch(&b, 6) { // a real caller would use about 1 MiB
		fmt.Printf("batch from document %d: %q\n", b.Seq, b.Docs)
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("skipped:", r.Skipped())
	// Output:
	// batch from document 0: ["one" "two"]
	// batch from document 2: ["three"]
	// skipped: 1
}

func ExampleParseError() {
	dir, err := os.MkdirTemp("", "corpus")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(path, []byte("{\"text\": \"ok\"}\n{\"text\": 7}\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	r := input.NewReader([]string{path}, input.Options{TextField: "text"})
	for r.Next() {
	}
	var pe *input.ParseError
	if errors.As(r.Err(), &pe) {
		fmt.Printf("line %d: %v\n", pe.Line, pe.Err)
	}
	// Output:
	// line 2: input: JSON field is not a string: "text" is a number
}
