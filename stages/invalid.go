package stages

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/tokenize"
)

// invalidText remembers where the corpus's first document with invalid
// UTF-8 is, for the warning that counts the bytes replaced: workers take
// batches in any order, so it keeps the document earliest in the corpus,
// which does not depend on the number of threads.
type invalidText struct {
	mu  sync.Mutex
	seq int64 // the document's ordinal in the corpus; -1 for none
	at  string
}

func newInvalidText() *invalidText { return &invalidText{seq: -1} }

// note finds the first document of b with invalid UTF-8 if tk, which has
// just tokenized b, replaced more bytes than the before it had replaced
// until then. The hot loops pay one comparison a batch; only a batch with
// invalid text is read again.
func (v *invalidText) note(tk *tokenize.Tokenizer, before int64, b *input.Batch) {
	if tk.Stats().InvalidUTF8 == before {
		return
	}
	for i, doc := range b.Docs {
		if utf8.Valid(doc) {
			continue
		}
		seq := b.Seq + int64(i)
		v.mu.Lock()
		if v.seq < 0 || seq < v.seq {
			v.seq, v.at = seq, fmt.Sprintf("%s:%d", b.Paths[i], b.Lines[i])
		}
		v.mu.Unlock()
		return
	}
}

// first returns the place of the first document with invalid UTF-8, as
// path:line (line or row), or "" if there was none.
func (v *invalidText) first() string { return v.at }
