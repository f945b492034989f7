//go:build !linux

package repocache

import "errors"

// exchange is not available here: install falls back on two renames.
func exchange(a, b string) error { return errors.New("no atomic exchange on this system") }
