//go:build !amd64 || purego

package prefetch

import "unsafe"

func ends(unsafe.Pointer, []uint32, int, uint) {}

func bitsAt(*byte, []uint32, int) {}
