package formats

import "slices"

// CountColumns holds counts rows as columns: the form in which the count
// stage's merge produces them, and in which the Parquet writer's pages and
// the Arrow encoder's batches hold them. Row i is (Target[i], Context[i],
// NPos[i], NNeg[i]); the four slices have the same length.
type CountColumns struct {
	Target, Context []int32
	NPos, NNeg      []float64
}

// MakeCountColumns returns empty columns with room for capacity rows.
func MakeCountColumns(capacity int) CountColumns {
	return CountColumns{
		Target: make([]int32, 0, capacity), Context: make([]int32, 0, capacity),
		NPos: make([]float64, 0, capacity), NNeg: make([]float64, 0, capacity),
	}
}

// Len returns the number of rows.
func (c *CountColumns) Len() int { return len(c.Target) }

// Reset empties the columns, keeping their memory.
func (c *CountColumns) Reset() {
	c.Target, c.Context, c.NPos, c.NNeg = c.Target[:0], c.Context[:0], c.NPos[:0], c.NNeg[:0]
}

// Row returns row i.
func (c *CountColumns) Row(i int) CountRow {
	return CountRow{TargetID: c.Target[i], ContextID: c.Context[i], NPos: c.NPos[i], NNeg: c.NNeg[i]}
}

// AppendRows appends rows, in one pass over them, storing through slices
// of len(rows) so that the compiler drops the bounds checks, rather than
// with four appends a row.
func (c *CountColumns) AppendRows(rows []CountRow) {
	tg, cx, np, nn := c.grow(len(rows))
	tg, cx, np, nn = tg[:len(rows)], cx[:len(rows)], np[:len(rows)], nn[:len(rows)]
	for i := range rows {
		r := &rows[i]
		tg[i], cx[i], np[i], nn[i] = r.TargetID, r.ContextID, r.NPos, r.NNeg
	}
}

// appendColumns appends rows [i, j) of src.
func (c *CountColumns) appendColumns(src *CountColumns, i, j int) {
	tg, cx, np, nn := c.grow(j - i)
	copy(tg, src.Target[i:j])
	copy(cx, src.Context[i:j])
	copy(np, src.NPos[i:j])
	copy(nn, src.NNeg[i:j])
}

// grow lengthens the columns by n rows and returns the new rows' slices.
func (c *CountColumns) grow(n int) (tg, cx []int32, np, nn []float64) {
	k, m := len(c.Target), len(c.Target)+n
	c.Target, c.Context = slices.Grow(c.Target, n)[:m], slices.Grow(c.Context, n)[:m]
	c.NPos, c.NNeg = slices.Grow(c.NPos, n)[:m], slices.Grow(c.NNeg, n)[:m]
	return c.Target[k:m], c.Context[k:m], c.NPos[k:m], c.NNeg[k:m]
}

// AppendTo appends the rows to dst.
func (c *CountColumns) AppendTo(dst []CountRow) []CountRow {
	for i := range c.Target {
		dst = append(dst, c.Row(i))
	}
	return dst
}
