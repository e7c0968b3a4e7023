//go:build !amd64 || purego

package prefetch

import "unsafe"

func window(unsafe.Pointer, *byte, []uint32, int, uint, int) {}
