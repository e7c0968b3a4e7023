// Command mlgen writes a synthetic MovieLens ratings file (and its movies
// file) for benchmarks; the defaults match ml-25m's size: 25 M ratings of
// 162 k users on 60 k movies with Zipf popularity.
//
//	go run ./formats/movielens/internal/mlgen -o /tmp/ml25m
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pwe-project/pwe/formats/movielens"
	"github.com/pwe-project/pwe/formats/movielens/mltest"
)

func main() {
	dir := flag.String("o", "", "output `directory`")
	format := flag.String("format", "csv", "`layout`: 100k, dat or csv")
	cfg := mltest.Config{Zipf: 1.05, Duplicates: 0.001}
	flag.IntVar(&cfg.Users, "users", 162000, "`n` users")
	flag.IntVar(&cfg.Movies, "movies", 60000, "`n` movies")
	flag.IntVar(&cfg.MeanRatings, "mean", 154, "mean ratings per user")
	flag.IntVar(&cfg.MinRatings, "min", 20, "least ratings per user")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random `seed`")
	flag.Parse()
	if err := run(*dir, *format, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "mlgen:", err)
		os.Exit(1)
	}
}

func run(dir, format string, cfg mltest.Config) error {
	f, err := movielens.ParseFormat(format)
	if err != nil || f == movielens.Auto {
		return fmt.Errorf("format %q, want 100k, dat or csv", format)
	}
	if dir == "" {
		return fmt.Errorf("no output directory (-o)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := map[movielens.Format][2]string{
		movielens.Format100K: {"u.data", "u.item"}, movielens.FormatDat: {"ratings.dat", "movies.dat"}, movielens.FormatCSV: {"ratings.csv", "movies.csv"},
	}[f]
	out, err := os.Create(filepath.Join(dir, names[0]))
	if err != nil {
		return err
	}
	defer out.Close()
	w := mltest.NewRatingWriter(out, f, mltest.Options{})
	var n int64
	mltest.Generate(cfg, func(r movielens.Rating) { w.Write(r); n++ })
	if err := w.Flush(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	titles := make(map[int32]string, cfg.Movies)
	for id := int32(1); id <= int32(cfg.Movies); id++ {
		titles[id] = mltest.Title(id)
	}
	mf, err := os.Create(filepath.Join(dir, names[1]))
	if err != nil {
		return err
	}
	defer mf.Close()
	if err := mltest.WriteTitles(mf, f, titles, mltest.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mlgen: %d ratings -> %s\n", n, filepath.Join(dir, names[0]))
	return mf.Close()
}
