//go:build !amd64 || purego

package tokenize

// haveBlockClasses reports whether blockClasses is implemented here.
const haveBlockClasses = false

func blockClasses(*byte) (word, upper, white uint64) { panic("tokenize: no blockClasses") }
