package core

import "context"

// modelLock orders the loads and unloads of one model name (and Stop's
// unload of it): one holds it at a time, and one waiting for it can give up
// when its context ends. Loads and unloads of different models do not wait
// for each other, so one stuck in its backend holds up no other model.
type modelLock struct {
	ch    chan struct{} // capacity 1: holding the lock is having sent into it
	users int           // holders and waiters; the lock is dropped at 0 (guarded by Server.mu)
}

// lockModel takes the lock of model name, waiting until ctx ends at the
// latest, and returns the function that releases it.
func (s *Server) lockModel(ctx context.Context, name string) (unlock func(), err error) {
	s.mu.Lock()
	l := s.locks[name]
	if l == nil {
		l = &modelLock{ch: make(chan struct{}, 1)}
		s.locks[name] = l
	}
	l.users++
	s.mu.Unlock()
	select {
	case l.ch <- struct{}{}: // free: taken even if ctx has ended
	default:
		select {
		case l.ch <- struct{}{}:
		case <-ctx.Done():
			s.dropModelLock(name, l)
			return nil, ctx.Err()
		}
	}
	return func() {
		<-l.ch
		s.dropModelLock(name, l)
	}, nil
}

func (s *Server) dropModelLock(name string, l *modelLock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.users--; l.users == 0 {
		delete(s.locks, name)
	}
}
