//go:build !linux

package core

import "errors"

// applyHostPolicy refuses: CPU and NUMA placement are Linux's.
func applyHostPolicy(*HostPolicy) (func() error, error) {
	return nil, errors.New("host policies with cpu-cores or numa-node need Linux")
}
