package input

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync"
)

// A bzip2 stream is "BZh" and a block-size digit, then blocks, each
// starting with a 48-bit magic and its CRC, then an end marker (another
// 48-bit magic) and the CRC of the stream: CRCs of its blocks, each folded
// into it by a left rotation and an exclusive or. Blocks are independent
// but bit-aligned, so the standard library's decoder, which runs at about
// 18 MB/s, decodes them one after another. On more than one core, pwe
// instead finds the blocks by their magic and decodes them on every core,
// each copied into a stream of its own ("BZh", the block, an end marker
// and the block's CRC as the stream's), in the manner of lbzip2 and of
// cosnicolaou/pbzip2; the reader returns them in order and checks each
// stream's CRC against its blocks'.
//
// The magics can also occur by chance inside a block's coded bits, once
// in 2^48 bit positions. A false block magic splits a block in two, which
// then fail to decode; the reader retries them joined. A false end marker
// is one not followed by another stream's header or by the end of the
// file, and is taken as data.

const (
	bzip2Block = 0x314159265359 // the digits of pi
	bzip2End   = 0x177245385090 // the digits of sqrt(pi)
	// bzip2MaxBlockBytes bounds a block's coded size: 900 000 bytes of
	// text, at most 20 bits each, and their tables.
	bzip2MaxBlockBytes = 4 << 20
	// bzip2OutCap is the most decoded bytes a block keeps before the
	// reader asks for them; the rest (a block of long runs of a byte can
	// hold 45 MB) is decoded as it is read.
	bzip2OutCap = 4 << 20
	// bzip2MaxJoin is the most following pieces tried with a block that
	// fails to decode.
	bzip2MaxJoin = 2
)

// newBzip2Reader returns the decompressed stream of r, decoded on workers
// goroutines where there are two or more.
func newBzip2Reader(r io.Reader, workers int) (io.Reader, func()) {
	if workers < 2 {
		return bzip2.NewReader(r), func() {}
	}
	return newParallelBzip2(r, workers, nil)
}

// bzip2Piece is a block (or a part of one, after a false magic) or a
// stream's end, in the order of the file.
type bzip2Piece struct {
	level byte   // the stream's block-size digit
	end   bool   // a stream's end: crc is the stream's
	crc   uint32 // the block's CRC, from its header, or the stream's
	bits  []byte // the block from its magic, shifted to start at bit 0
	nbits int64
	done  chan struct{}
	// The block decoded, when done is closed: out, then rest's bytes (a
	// block whose decoding passed bzip2OutCap), or err.
	out  []byte
	rest io.Reader
	err  error
}

// stream returns a bzip2 stream of the piece's bits alone, with the
// piece's CRC as the stream's.
func (p *bzip2Piece) stream() []byte {
	var w bitWriter
	w.b = append(make([]byte, 0, 4+len(p.bits)+11), 'B', 'Z', 'h', p.level)
	w.n = 32
	w.copyBits(p.bits, 0, p.nbits)
	w.write(bzip2End, 48)
	w.write(uint64(p.crc), 32)
	return w.b
}

// decode decodes the piece, keeping at most bzip2OutCap bytes.
func (p *bzip2Piece) decode(buf []byte) {
	if cap(buf) == 0 {
		buf = make([]byte, 0, 1<<20)
	}
	zr := bzip2.NewReader(bytes.NewReader(p.stream()))
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= bzip2OutCap {
				p.out, p.rest = buf, zr
				return
			}
			buf = slices.Grow(buf, len(buf))
		}
		n, err := zr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			p.out = buf
			return
		}
		if err != nil {
			p.out, p.err = buf[:0], err
			return
		}
	}
}

// parallelBzip2 reads a bzip2 file: a goroutine finds its pieces and
// queues them, in order, for the reader and for the workers that decode
// them.
type parallelBzip2 struct {
	order   chan *bzip2Piece // the pieces in the file's order
	scanErr error            // the scan's error, set before order is closed
	stopped chan struct{}    // closed by stop
	stop    sync.Once
	bufs    sync.Pool // decoded blocks' buffers

	cur *bzip2Piece
	out []byte
	crc uint32 // the stream's blocks' CRCs so far, folded
	err error  // sticky
	eof bool
}

// newParallelBzip2 starts the scan and the workers. split, for tests,
// adds a false magic at the bit offsets within a block (from its magic)
// that it returns.
func newParallelBzip2(r io.Reader, workers int, split func(nbits int64) []int64) (*parallelBzip2, func()) {
	z := &parallelBzip2{
		order:   make(chan *bzip2Piece, 2*workers),
		stopped: make(chan struct{}),
	}
	jobs := make(chan *bzip2Piece, workers)
	for range workers {
		go func() {
			for {
				var p *bzip2Piece
				select {
				case p = <-jobs:
				case <-z.stopped:
					return
				}
				if p == nil {
					return
				}
				var buf []byte
				if b, ok := z.bufs.Get().(*[]byte); ok {
					buf = (*b)[:0]
				}
				p.decode(buf)
				close(p.done)
			}
		}()
	}
	s := &bzip2Scanner{r: r, split: split}
	go func() {
		defer close(jobs)
		z.scanErr = s.scan(func(p *bzip2Piece) bool {
			select {
			case z.order <- p:
			case <-z.stopped:
				return false
			}
			if p.end {
				close(p.done)
				return true
			}
			select {
			case jobs <- p:
				return true
			case <-z.stopped:
				return false
			}
		})
		close(z.order)
	}()
	return z, func() { z.stop.Do(func() { close(z.stopped) }) }
}

func (z *parallelBzip2) Read(b []byte) (int, error) {
	for {
		if len(z.out) > 0 {
			n := copy(b, z.out)
			z.out = z.out[n:]
			return n, nil
		}
		if z.cur != nil && z.cur.rest != nil {
			n, err := z.cur.rest.Read(b)
			if err == io.EOF {
				z.cur.rest = nil
				err = nil
			}
			if err != nil {
				z.err = err
			}
			if n > 0 || err != nil {
				return n, err
			}
			continue
		}
		if z.err != nil {
			return 0, z.err
		}
		if z.eof {
			return 0, io.EOF
		}
		z.release()
		p, ok := <-z.order
		if !ok {
			if z.scanErr != nil {
				z.err = z.scanErr
				return 0, z.err
			}
			z.eof = true
			return 0, io.EOF
		}
		<-p.done
		if p.end {
			if z.crc != p.crc {
				z.err = bzip2.StructuralError("file checksum mismatch")
			}
			z.crc = 0
			continue
		}
		if p.err != nil {
			p = z.join(p)
			if p.err != nil {
				z.err = p.err
				continue
			}
		}
		z.crc = bits.RotateLeft32(z.crc, 1) ^ p.crc
		z.cur, z.out = p, p.out
	}
}

// release gives the current block's buffer back.
func (z *parallelBzip2) release() {
	if z.cur != nil && cap(z.cur.out) > 0 {
		b := z.cur.out[:0]
		z.bufs.Put(&b)
	}
	z.cur = nil
}

// join retries a block that failed to decode joined with the pieces after
// it, as a false magic would have split it, and returns the first that
// decodes, or p.
func (z *parallelBzip2) join(p *bzip2Piece) *bzip2Piece {
	w := bitWriter{b: bytes.Clone(p.bits), n: p.nbits}
	for range bzip2MaxJoin {
		q, ok := <-z.order
		if !ok {
			break
		}
		<-q.done
		if q.end {
			break
		}
		w.copyBits(q.bits, 0, q.nbits)
		joined := &bzip2Piece{level: p.level, crc: p.crc, bits: w.b, nbits: w.n}
		joined.decode(nil)
		if joined.err == nil {
			return joined
		}
	}
	return p
}

// bzip2Scanner finds the pieces of a bzip2 file.
type bzip2Scanner struct {
	r     io.Reader
	buf   []byte // the raw bytes from base on
	base  int64
	eof   bool
	split func(nbits int64) []int64
}

// more reads more of the file into buf, keeping the bytes from keep (an
// offset in the file) on; it reports false at the end of the file.
func (s *bzip2Scanner) more(keep int64) (bool, error) {
	if s.eof {
		return false, nil
	}
	if drop := keep - s.base; drop > int64(len(s.buf)/2) {
		s.buf = s.buf[:copy(s.buf, s.buf[drop:])]
		s.base = keep
	}
	if len(s.buf) == cap(s.buf) {
		s.buf = append(s.buf, make([]byte, max(1<<18, len(s.buf)))...)[:len(s.buf)]
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err == io.EOF {
		s.eof = true
		return n > 0, nil
	}
	return true, err
}

// need makes buf hold the file's bytes up to end (an offset), keeping
// those from keep on; false if the file ends first.
func (s *bzip2Scanner) need(keep, end int64) (bool, error) {
	for s.base+int64(len(s.buf)) < end {
		if ok, err := s.more(keep); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// bits48 returns the 48 bits from bit offset at, which buf holds.
func (s *bzip2Scanner) bits48(at int64) uint64 {
	i := at/8 - s.base
	if i+8 <= int64(len(s.buf)) {
		return binary.BigEndian.Uint64(s.buf[i:]) << (at % 8) >> 16
	}
	var w [8]byte
	copy(w[:], s.buf[i:])
	return binary.BigEndian.Uint64(w[:]) << (at % 8) >> 16
}

var (
	errBzip2Truncated = fmt.Errorf("bzip2 data invalid: %w", io.ErrUnexpectedEOF)
	errBzip2LongBlock = bzip2.StructuralError(fmt.Sprintf("no block end within %d MiB", bzip2MaxBlockBytes>>20))
)

// scan emits the file's pieces in order until emit returns false or the
// file ends.
func (s *bzip2Scanner) scan(emit func(*bzip2Piece) bool) error {
	var pos int64 // the next stream's first byte
	for streams := 0; ; streams++ {
		ok, err := s.need(pos, pos+10)
		if err != nil {
			return err
		}
		if !ok && streams > 0 && s.base+int64(len(s.buf)) == pos {
			return nil
		}
		if !ok {
			return errBzip2Truncated
		}
		h := s.buf[pos-s.base:]
		if string(h[:3]) != "BZh" || h[3] < '1' || h[3] > '9' {
			if streams > 0 {
				return bzip2.StructuralError("bad magic value in continuation file")
			}
			return bzip2.StructuralError("bad magic value")
		}
		level := h[3]
		at := (pos + 4) * 8
		for {
			kind := s.bits48(at)
			if kind == bzip2End {
				end, err := s.streamEnd(at)
				if err != nil {
					return err
				}
				if !emit(&bzip2Piece{end: true, crc: uint32(s.bitsAt(at+48, 32)), done: make(chan struct{})}) {
					return nil
				}
				pos = end
				break
			}
			if kind != bzip2Block {
				return bzip2.StructuralError("bad magic value found")
			}
			next, err := s.nextMarker(at)
			if err != nil {
				return err
			}
			for _, p := range s.pieces(level, at, next) {
				if !emit(p) {
					return nil
				}
			}
			at = next
		}
	}
}

// bitsAt returns the n <= 32 bits at bit offset at, which buf holds.
func (s *bzip2Scanner) bitsAt(at int64, n uint) uint64 {
	return s.bits48(at) >> (48 - n)
}

// streamEnd returns the offset after the stream whose end marker is at
// bit offset at.
func (s *bzip2Scanner) streamEnd(at int64) (int64, error) {
	end := (at + 48 + 32 + 7) / 8
	if ok, err := s.need(at/8, end); err != nil || !ok {
		if err == nil {
			err = errBzip2Truncated
		}
		return 0, err
	}
	return end, nil
}

// nextMarker returns the bit offset of the marker after the block whose
// magic is at bit offset at: another block's magic, or an end marker
// followed by the end of the file or another stream.
func (s *bzip2Scanner) nextMarker(at int64) (int64, error) {
	from := at + 80 // past the block's magic and CRC
	for {
		m, err := s.find(at, from)
		if err != nil {
			return 0, err
		}
		if s.bits48(m) == bzip2Block {
			return m, nil
		}
		if ok, err := s.endsStream(at, m); err != nil || ok {
			return m, err
		}
		from = m + 1
	}
}

// endsStream reports whether the end marker at bit offset m, in the block
// at bit offset at, is followed by the end of the file or by another
// stream's header and first marker.
func (s *bzip2Scanner) endsStream(at, m int64) (bool, error) {
	end := (m + 80 + 7) / 8
	if _, err := s.need(at/8, end+10); err != nil {
		return false, err
	}
	have := s.base + int64(len(s.buf))
	if have == end {
		return true, nil
	}
	if have < end+10 {
		return false, nil
	}
	h := s.buf[end-s.base:]
	if string(h[:3]) != "BZh" || h[3] < '1' || h[3] > '9' {
		return false, nil
	}
	k := s.bits48((end + 4) * 8)
	return k == bzip2Block || k == bzip2End, nil
}

// find returns the bit offset of the first magic of either kind at or
// after bit offset from, reading more of the file as needed, with the
// bytes from the block at bit offset at kept.
func (s *bzip2Scanner) find(at, from int64) (int64, error) {
	for {
		have := s.base + int64(len(s.buf))
		// A magic from bit k of byte i lies in bytes i to i+6, and
		// byte i+1 is one of bzip2Second's; the last byte checked is
		// the last whose every magic buf would hold.
		last := have - 7
		if s.eof {
			last = have - 6
		}
		buf, base := s.buf, s.base
		i := from / 8
		for ; i <= last; i++ {
			c := bzip2Second[buf[i+1-base]]
			if c == 0 {
				continue
			}
			if i-at/8 > bzip2MaxBlockBytes {
				return 0, errBzip2LongBlock
			}
			for ; c != 0; c &= c - 1 {
				b := i*8 + int64(bits.TrailingZeros8(c))
				if b >= from && (b+55)/8 <= have {
					if v := s.bits48(b); v == bzip2Block || v == bzip2End {
						return b, nil
					}
				}
			}
		}
		if i-at/8 > bzip2MaxBlockBytes {
			return 0, errBzip2LongBlock
		}
		if s.eof {
			return 0, errBzip2Truncated
		}
		if _, err := s.more(at / 8); err != nil {
			return 0, err
		}
		from = max(from, i*8)
	}
}

// bzip2Second has bit k of entry c set where a magic at bit k of a byte
// has c as its next byte.
var bzip2Second = func() (t [256]uint8) {
	for k := range 8 {
		for _, m := range []uint64{bzip2Block, bzip2End} {
			t[uint8(m>>(48-16+k))] |= 1 << k
		}
	}
	return t
}()

// pieces returns the block at bit offsets [at, next) as one piece, or
// more where s.split says.
func (s *bzip2Scanner) pieces(level byte, at, next int64) []*bzip2Piece {
	cuts := []int64{0}
	if s.split != nil {
		cuts = append(cuts, s.split(next-at)...)
	}
	cuts = append(cuts, next-at)
	var ps []*bzip2Piece
	for i := 0; i+1 < len(cuts); i++ {
		a, n := at+cuts[i], cuts[i+1]-cuts[i]
		var w bitWriter
		w.b = make([]byte, 0, (n+7)/8+8)
		w.copyBits(s.buf[at/8-s.base:], a-at/8*8, n)
		ps = append(ps, &bzip2Piece{level: level, crc: uint32(s.bitsAt(a+48, 32)), bits: w.b, nbits: n, done: make(chan struct{})})
	}
	return ps
}

// bitWriter appends bits to b, most significant first; n counts them.
type bitWriter struct {
	b []byte
	n int64
}

// write appends the k <= 56 low bits of v.
func (w *bitWriter) write(v uint64, k uint) {
	for k > 0 {
		free := uint(8 - w.n%8)
		if free == 8 {
			w.b = append(w.b, 0)
		}
		take := min(free, k)
		w.b[len(w.b)-1] |= byte(v>>(k-take)&(1<<take-1)) << (free - take)
		w.n += int64(take)
		k -= take
	}
}

// copyBits appends the n bits of src from bit offset off.
func (w *bitWriter) copyBits(src []byte, off, n int64) {
	if w.n%8 == 0 && n >= 8 {
		// Whole bytes: each is two of src's shifted together.
		i, k, m := off/8, uint(off%8), n/8
		at := len(w.b)
		w.b = slices.Grow(w.b, int(m))[:at+int(m)]
		dst := w.b[at:]
		if k == 0 {
			copy(dst, src[i:i+m])
		} else {
			j := int64(0)
			for ; j+8 < m && i+j+9 <= int64(len(src)); j += 8 {
				v := binary.BigEndian.Uint64(src[i+j:])<<k | uint64(src[i+j+8]>>(8-k))
				binary.BigEndian.PutUint64(dst[j:], v)
			}
			for ; j < m; j++ {
				dst[j] = src[i+j]<<k | src[i+j+1]>>(8-k)
			}
		}
		w.n += 8 * m
		off += 8 * m
		n -= 8 * m
	}
	for ; n >= 8; n -= 8 {
		i, k := off/8, uint(off%8)
		v := src[i] << k
		if k > 0 {
			v |= src[i+1] >> (8 - k)
		}
		w.write(uint64(v), 8)
		off += 8
	}
	for ; n > 0; n-- {
		w.write(uint64(src[off/8]>>(7-off%8)&1), 1)
		off++
	}
}
