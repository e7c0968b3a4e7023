package bytesize

import (
	"strconv"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{-3, "-3 bytes"},
		{0, "0 bytes"},
		{1, "1 byte"},
		{1023, "1023 bytes"},
		{1024, "1KiB"},
		{1536, "1.5KiB"},
		{262144, "256KiB"},
		{1 << 20, "1MiB"},
		{3 << 19, "1.5MiB"},
		{1025 << 20, "1025MiB"},
		{12345 << 10, "12345KiB"},
		{1<<20 + 1, "1MiB"},
		{256 << 20, "256MiB"},
		{1 << 30, "1GiB"},
		{1500000000, "1.4GiB"},
		{500000000, "477MiB"},
		{5 << 40, "5TiB"},
		{1<<63 - 1, "8EiB"},
	} {
		if got := Format(c.n); got != c.want {
			t.Errorf("Format(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestFormatExact checks that an exact size reads back as the same number
// of bytes, by the unit's multiplier.
func TestFormatExact(t *testing.T) {
	mult := map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
	for _, n := range []int64{1 << 10, 3 << 10, 7 << 20, 1023 << 20, 1025 << 20, 3 << 30, 1 << 40, 12345 << 10, 3 << 29, 5 << 18} {
		s := Format(n)
		unit := s[len(s)-3:]
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, unit), 64)
		if err != nil || mult[unit] == 0 || v*mult[unit] != float64(n) {
			t.Errorf("Format(%d) = %q does not read back", n, s)
		}
	}
}
