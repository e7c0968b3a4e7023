// Package bytesize writes sizes in bytes as people type them in --memory:
// 256MiB rather than 268435456.
package bytesize

import "strconv"

var units = [...]struct {
	name  string
	shift uint
}{{"EiB", 60}, {"PiB", 50}, {"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}}

// Format returns n as a number of the largest binary unit it reaches, to
// three significant digits ("256MiB", "1.5GiB", "1.4GiB" for 1.5 GB); if
// that is not exact but a smaller unit divides n, as that unit's whole
// number ("1025MiB"). Below a KiB, and for negative n, it returns the
// number of bytes ("10 bytes").
func Format(n int64) string {
	for i, u := range units {
		if n < 1<<u.shift {
			continue
		}
		v := float64(n) / float64(int64(1)<<u.shift)
		s := strconv.FormatFloat(v, 'g', 3, 64)
		if r, err := strconv.ParseFloat(s, 64); err == nil && r == v {
			return s + u.name
		}
		for _, w := range units[i+1:] {
			if n%(1<<w.shift) == 0 {
				return strconv.FormatInt(n>>w.shift, 10) + w.name
			}
		}
		return s + u.name
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
