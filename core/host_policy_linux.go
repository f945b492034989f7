package core

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// applyHostPolicy sets the calling thread (locked by the caller) as p
// says, and returns what puts it back: the CPUs it had, and the default
// memory policy (Triton's ResetNumaMemoryPolicy).
func applyHostPolicy(p *HostPolicy) (restore func() error, err error) {
	var old unix.CPUSet
	if len(p.CPUs) > 0 {
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			return nil, fmt.Errorf("read the thread's CPUs: %w", err)
		}
		var set unix.CPUSet
		for _, c := range p.CPUs {
			if c < 0 || c >= len(set)*64 {
				return nil, fmt.Errorf("cpu-cores: CPU %d is out of range", c)
			}
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return nil, fmt.Errorf("cpu-cores %v: %w", p.CPUs, err)
		}
	}
	if p.NUMANode != nil {
		var nodes unix.CPUSet // a node mask, as wide as a CPU mask
		n := *p.NUMANode
		if n < 0 || n >= len(nodes)*64 {
			err = fmt.Errorf("numa-node: node %d is out of range", n)
		} else {
			nodes.Set(n)
			if e := unix.SetMemPolicy(unix.MPOL_BIND, &nodes); e != nil {
				err = fmt.Errorf("numa-node %d: %w", n, e)
			}
		}
		if err != nil {
			if len(p.CPUs) > 0 {
				_ = unix.SchedSetaffinity(0, &old)
			}
			return nil, err
		}
	}
	return func() error {
		var errs []error
		if p.NUMANode != nil {
			if err := unix.SetMemPolicy(unix.MPOL_DEFAULT, nil); err != nil {
				errs = append(errs, fmt.Errorf("reset the memory policy: %w", err))
			}
		}
		if len(p.CPUs) > 0 {
			if err := unix.SchedSetaffinity(0, &old); err != nil {
				errs = append(errs, fmt.Errorf("restore the thread's CPUs: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
}
