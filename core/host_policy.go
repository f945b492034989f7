package core

import (
	"fmt"
	"maps"
	"runtime"
)

// Host policies (Triton's --host-policy <name>,<setting>=<value>): an
// instance runs under the policy its instance group names (host_policy),
// by default "cpu", "gpu_<id>" or "model" after its kind and device, as in
// Triton's TritonModelInstance::CreateInstances. A policy with cpu-cores
// pins the thread that creates the instance and each thread that executes
// it to those CPUs, and one with numa-node binds the memory those threads
// allocate to that NUMA node (MPOL_BIND), as Triton's SetNumaConfigOnThread
// does; threads a backend starts from there inherit both. The calls run on
// a goroutine locked to its thread, whose CPUs and memory policy are
// restored before it is unlocked.

// HostPolicy is what one host policy does to the instances that run under
// it.
type HostPolicy struct {
	// CPUs, if not empty, are the CPUs (cpu-cores) the instance's
	// ModelInstanceInitialize and Execute calls run on.
	CPUs []int
	// NUMANode, if set, is the NUMA node (numa-node) the memory allocated
	// in those calls comes from.
	NUMANode *int
	// Settings are the policy's settings as given, cpu-cores and
	// numa-node among them.
	Settings map[string]string
}

// active reports whether p changes anything for a thread.
func (p *HostPolicy) active() bool {
	return p != nil && (len(p.CPUs) > 0 || p.NUMANode != nil)
}

// HostPolicySettings returns the settings of the host policy the instance
// runs under (nil when the server has no such policy), for a backend layer
// to hand to the backend (TRITONBACKEND_ModelInstanceHostPolicy).
func (i *Instance) HostPolicySettings() map[string]string {
	if i.policy == nil {
		return nil
	}
	return maps.Clone(i.policy.Settings)
}

// attachHostPolicies gives each instance of m the server's policy of its
// host policy name, if the server has one.
func (m *Model) attachHostPolicies() {
	policies := m.srv.opts.HostPolicies
	if len(policies) == 0 {
		return
	}
	for _, inst := range m.instances {
		if p, ok := policies[inst.hostPolicy]; ok {
			inst.policy = &p
		}
	}
}

// underPolicy runs f on a thread set up as the instance's host policy
// says, and restores the thread afterwards; without an active policy it
// just runs f.
func (i *Instance) underPolicy(f func() error) error {
	if !i.policy.active() {
		return f()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restore, err := applyHostPolicy(i.policy)
	if err != nil {
		return Errorf(CodeInternal, "instance %q: host policy %q: %v", i.name, i.hostPolicy, err)
	}
	defer func() {
		if err := restore(); err != nil {
			i.model.log.Errorf("instance %q: host policy %q: restoring the thread: %v", i.name, i.hostPolicy, err)
		}
	}()
	return f()
}

// executeBackend is Execute of the instance's backend under its host
// policy.
func (i *Instance) executeBackend(batch []*Request) error {
	if !i.policy.active() {
		return i.backend.Execute(batch)
	}
	return i.underPolicy(func() error { return i.backend.Execute(batch) })
}

// CheckHostPolicy checks that the calling thread may take the settings of
// p (the CPUs exist and are allowed to the process, the NUMA node exists),
// by applying them and restoring the thread at once: the server's options
// can be refused at start rather than at a model's load.
func CheckHostPolicy(p HostPolicy) error {
	if !p.active() {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restore, err := applyHostPolicy(&p)
	if err != nil {
		return err
	}
	if err := restore(); err != nil {
		return fmt.Errorf("restoring the thread: %w", err)
	}
	return nil
}
