package counts

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/pwe-project/pwe/formats"
)

// RowReader yields rows sorted by (target, context), like formats.Reader;
// Read returns io.EOF with no rows at the end. Path names the rows in
// errors.
type RowReader interface {
	Read(buf []formats.CountRow) (int, error)
	Path() string
}

// Appender adds new counts, arriving in sorted batches (as Counter.Finish
// emits them), to the sorted rows of an earlier result: a streaming
// merge-join that sums the pairs present in both and holds only a batch of
// each side, whatever their size.
//
// Positive counts are multiples of 1/scale, the window weighting's common
// scale (see windowScale), so they are summed as the integers they stand
// for: the result equals, bit for bit, what one run over both corpora
// writes. Negative counts are summed as they are.
type Appender struct {
	old   RowReader
	v     int
	scale float64
	emit  func([]formats.CountRow) error

	buf      []formats.CountRow // rows of old, buf[pos:n] unread
	pos, n   int
	eof      bool
	oldRows  int64
	prev     formats.CountRow // last row of old, for the order check
	prevNew  formats.CountRow
	newRows  int64
	out      []formats.CountRow
	rowsBuf  []formats.CountRow // AddColumns's rows
	stats    AppendStats
	finished bool
}

// AppendStats describe the merged result.
type AppendStats struct {
	// OldRows is the number of rows of the earlier result.
	OldRows int64
	// Rows and UniquePairs (rows with n_pos > 0) count the merged rows.
	Rows, UniquePairs int64
}

// errNotMultiple reports a positive count that no window of these settings
// produces, a sign that the earlier counts were made otherwise.
var errNotMultiple = errors.New("counts: n_pos is not a multiple of the window's weight scale")

// NewAppender merges into emit the rows of old (counts over a vocabulary of
// v tokens, made with cfg's window and weighting) and the rows given to Add.
func NewAppender(cfg Config, v int, old RowReader, emit func([]formats.CountRow) error) (*Appender, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w, err := windowScale(cfg.Window, cfg.Weighting)
	if err != nil {
		return nil, err
	}
	return &Appender{
		old: old, v: v, scale: float64(w[0]), emit: emit,
		buf: make([]formats.CountRow, batchRows), out: make([]formats.CountRow, 0, batchRows),
	}, nil
}

// oldErr places an error in the earlier counts.
func (a *Appender) oldErr(err error) error {
	return fmt.Errorf("%s: row %d: %w", a.old.Path(), a.oldRows-1, err)
}

// peek returns the next row of old, reading a batch when needed.
func (a *Appender) peek() (*formats.CountRow, error) {
	for a.pos == a.n {
		if a.eof {
			return nil, nil
		}
		n, err := a.old.Read(a.buf)
		a.pos, a.n = 0, n
		if err == io.EOF {
			a.eof = true
		} else if err != nil {
			return nil, err
		}
		for i := range a.buf[:n] {
			var prev *formats.CountRow
			if a.oldRows > 0 {
				prev = &a.prev
			}
			a.oldRows++
			if err := formats.CheckCountRow(a.buf[i], prev, a.v); err != nil {
				return nil, a.oldErr(err)
			}
			a.prev = a.buf[i]
		}
	}
	return &a.buf[a.pos], nil
}

// AddColumns merges the next sorted batch of new rows, held as columns.
func (a *Appender) AddColumns(cols *formats.CountColumns) error {
	a.rowsBuf = cols.AppendTo(a.rowsBuf[:0])
	return a.Add(a.rowsBuf)
}

// Add merges the next sorted batch of new rows.
func (a *Appender) Add(rows []formats.CountRow) error {
	for _, r := range rows {
		var prev *formats.CountRow
		if a.newRows > 0 {
			prev = &a.prevNew
		}
		if err := formats.CheckCountRow(r, prev, a.v); err != nil {
			return fmt.Errorf("counts: new row %d: %w", a.newRows, err)
		}
		a.newRows++
		a.prevNew = r
		for {
			o, err := a.peek()
			if err != nil {
				return err
			}
			if o == nil || !less(*o, r) {
				if o != nil && o.TargetID == r.TargetID && o.ContextID == r.ContextID {
					if r.NPos, err = a.sumPos(o.NPos, r.NPos); err != nil {
						return a.oldErr(err)
					}
					r.NNeg += o.NNeg
					a.pos++
				}
				break
			}
			if err := a.put(*o); err != nil {
				return err
			}
			a.pos++
		}
		if err := a.put(r); err != nil {
			return err
		}
	}
	return nil
}

// Finish emits the rest of old and the last batch.
func (a *Appender) Finish() (AppendStats, error) {
	if a.finished {
		return a.stats, errors.New("counts: Appender finished twice")
	}
	a.finished = true
	for {
		o, err := a.peek()
		if err != nil {
			return a.stats, err
		}
		if o == nil {
			break
		}
		if err := a.put(*o); err != nil {
			return a.stats, err
		}
		a.pos++
	}
	if err := a.flush(); err != nil {
		return a.stats, err
	}
	a.stats.OldRows = a.oldRows
	return a.stats, nil
}

func less(x, y formats.CountRow) bool {
	return x.TargetID < y.TargetID || x.TargetID == y.TargetID && x.ContextID < y.ContextID
}

// sumPos adds two positive counts as multiples of 1/scale.
func (a *Appender) sumPos(x, y float64) (float64, error) {
	if a.scale == 1 {
		return x + y, nil
	}
	kx, ky := math.Round(x*a.scale), math.Round(y*a.scale)
	if kx/a.scale != x {
		return 0, fmt.Errorf("%w: %v is not k/%v", errNotMultiple, x, a.scale)
	}
	if ky/a.scale != y {
		return 0, fmt.Errorf("%w: %v is not k/%v", errNotMultiple, y, a.scale)
	}
	return float64(uint64(kx)+uint64(ky)) / a.scale, nil
}

func (a *Appender) put(r formats.CountRow) error {
	a.stats.Rows++
	if r.NPos > 0 {
		a.stats.UniquePairs++
	}
	a.out = append(a.out, r)
	if len(a.out) == cap(a.out) {
		return a.flush()
	}
	return nil
}

func (a *Appender) flush() error {
	if len(a.out) == 0 {
		return nil
	}
	err := a.emit(a.out)
	a.out = a.out[:0]
	return err
}
