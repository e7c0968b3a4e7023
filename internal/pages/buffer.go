package pages

// Buffer is a byte buffer in memory mapped for it alone, outside the Go
// heap, where the platform allows (Linux): its first use of a page needs no
// clearing by the runtime, its pages are huge where the kernel gives them
// on advice, and it returns its memory to the system when it grows or is
// freed, rather than leaving it to the collector. It suits a large buffer
// that is refilled many times and grows now and then, whose owner knows
// when it is done with it. The zero Buffer is empty; Free must be called
// once it is no longer used, and its bytes must not be used after that.
type Buffer struct {
	b []byte
}

// Bytes returns the buffer's contents, valid until it next grows or is
// freed.
func (m *Buffer) Bytes() []byte { return m.b }

// Len is the number of bytes held.
func (m *Buffer) Len() int { return len(m.b) }

// Cap is the number of bytes the buffer can hold without growing.
func (m *Buffer) Cap() int { return cap(m.b) }

// Reset empties the buffer, keeping its memory.
func (m *Buffer) Reset() { m.b = m.b[:0] }

// Reserve makes room for at least n bytes in all, moving the contents to
// new memory if there is less.
func (m *Buffer) Reserve(n int) {
	if n <= cap(m.b) {
		return
	}
	b := mapBytes(n)[:len(m.b)]
	copy(b, m.b)
	unmapBytes(m.b)
	m.b = b
}

// Append appends the byte slices, doubling the buffer's room if it must
// grow.
func (m *Buffer) Append(parts ...[]byte) {
	n := len(m.b)
	for _, p := range parts {
		n += len(p)
	}
	if n > cap(m.b) {
		m.Reserve(max(n, 2*cap(m.b)))
	}
	for _, p := range parts {
		m.b = append(m.b, p...)
	}
}

// Free returns the buffer's memory and empties it.
func (m *Buffer) Free() {
	unmapBytes(m.b)
	m.b = nil
}
