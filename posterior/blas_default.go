//go:build !openblas

package posterior

// defaultDense is the backend of new workspaces: pure Go unless built with
// the openblas tag.
var defaultDense = gonumDense
