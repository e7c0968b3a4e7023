//go:build !linux

package pages

import "unsafe"

func adviseHuge(unsafe.Pointer, uintptr) {}
