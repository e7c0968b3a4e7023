package tokenize

import (
	"errors"
	"fmt"
	"math"
)

// ErrDuplicateToken is wrapped by [NewIndex]'s error for a token listed twice.
var ErrDuplicateToken = errors.New("tokenize: duplicate token")

// An Index maps tokens to their ids, the positions in the list it was made
// from. Lookups do not allocate, and an Index is safe for concurrent lookups.
type Index struct {
	tab strtab
}

// NewIndex returns an Index giving tokens[i] the id i. A token listed twice
// is an error wrapping ErrDuplicateToken; so is a list too long for int32 ids.
func NewIndex(tokens []string) (*Index, error) {
	if len(tokens) > math.MaxInt32 {
		return nil, fmt.Errorf("tokenize: %d tokens do not fit in int32 ids", len(tokens))
	}
	x := &Index{tab: newStrtab(len(tokens))}
	for i, tok := range tokens {
		b := []byte(tok)
		h := x.tab.hash(b)
		slot, id := x.tab.find(b, h)
		if id >= 0 {
			return nil, fmt.Errorf("%w %q at ids %d and %d", ErrDuplicateToken, tok, id, i)
		}
		x.tab.insert(b, h, slot)
	}
	return x, nil
}

// ID returns the id of tok and true, or -1 and false if tok is not in the
// index.
func (x *Index) ID(tok []byte) (int32, bool) {
	_, id := x.tab.find(tok, x.tab.hash(tok))
	return int32(id), id >= 0
}

// Len returns the number of tokens in the index.
func (x *Index) Len() int { return x.tab.len() }
