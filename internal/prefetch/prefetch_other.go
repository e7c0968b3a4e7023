//go:build !amd64 || purego

package prefetch

func words(*uint32, []uint32, int) {}
