//go:build unix

package pipeline

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileID names the file info describes by its device and inode.
func fileID(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}
