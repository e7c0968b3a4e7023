package formats

import "slices"

// countColumns holds counts rows as columns, the form both the Parquet
// writer's pages and the Arrow encoder's batches take.
type countColumns struct {
	target, context []int32
	npos, nneg      []float64
}

func makeCountColumns(capacity int) countColumns {
	return countColumns{
		target: make([]int32, 0, capacity), context: make([]int32, 0, capacity),
		npos: make([]float64, 0, capacity), nneg: make([]float64, 0, capacity),
	}
}

func (c *countColumns) len() int { return len(c.target) }

// appendRows transposes rows onto the ends of the columns. It is on the hot
// path of writing counts: one pass over the rows, storing through slices
// of len(rows) so that the compiler drops the bounds checks, rather than
// four appends a row.
func (c *countColumns) appendRows(rows []CountRow) {
	k, n := len(c.target), len(c.target)+len(rows)
	c.target, c.context = slices.Grow(c.target, len(rows))[:n], slices.Grow(c.context, len(rows))[:n]
	c.npos, c.nneg = slices.Grow(c.npos, len(rows))[:n], slices.Grow(c.nneg, len(rows))[:n]
	tg, cx, np, nn := c.target[k:n], c.context[k:n], c.npos[k:n], c.nneg[k:n]
	tg, cx, np, nn = tg[:len(rows)], cx[:len(rows)], np[:len(rows)], nn[:len(rows)]
	for i := range rows {
		r := &rows[i]
		tg[i], cx[i], np[i], nn[i] = r.TargetID, r.ContextID, r.NPos, r.NNeg
	}
}

// reset empties the columns, keeping their memory.
func (c *countColumns) reset() {
	c.target, c.context, c.npos, c.nneg = c.target[:0], c.context[:0], c.npos[:0], c.nneg[:0]
}
