package dynbatch

import (
	"slices"
	"sort"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
)

// The batcher's queue orders requests as Triton's dynamic batcher does:
// by priority level first (1 the highest; a model without
// priority_levels has one level, 0), then, within a level, the requests
// waiting in arrival order, then those a DELAY policy set aside when their
// timeout passed, in the order it did. Each level has its queue policy
// (dynamic_batching's priority_queue_policy, else default_queue_policy):
// a bound on the requests it holds (max_queue_size), and a timeout
// (default_timeout_microseconds, or the request's own when it is shorter
// and allow_timeout_override is set) past which a waiting request is
// rejected (REJECT) or set aside behind the level's others (DELAY).
//
// A batcher without dynamic batching has no policy: a request waits at
// most its client's timeout (Request.Expired), tritonhost's bound where
// Triton's default scheduler has none.

// queuePolicy is one level's ModelQueuePolicy, in the units the queue
// uses.
type queuePolicy struct {
	maxSize  int
	timeout  uint64 // nanoseconds; 0: none
	override bool   // a request's shorter timeout applies
	delay    bool   // past the timeout a request is set aside, not rejected
}

func policyOf(p *configpb.ModelQueuePolicy) queuePolicy {
	return queuePolicy{
		maxSize:  int(p.GetMaxQueueSize()),
		timeout:  p.GetDefaultTimeoutMicroseconds() * uint64(time.Microsecond),
		override: p.GetAllowTimeoutOverride(),
		delay:    p.GetTimeoutAction() == configpb.ModelQueuePolicy_DELAY,
	}
}

// deadline returns when r, enqueued at now, times out under
// p, as Nanotime (0: never).
func (p queuePolicy) deadline(r *core.Request, now uint64) uint64 {
	timeout := p.timeout
	if own := uint64(r.Timeout()); p.override && own != 0 && own < timeout {
		timeout = own
	}
	if timeout == 0 {
		return 0
	}
	return now + timeout
}

// level holds the requests of one priority level.
type level struct {
	priority  uint64
	policy    queuePolicy
	permanent bool // configured: kept when empty

	waiting []*core.Request // in arrival order, from whead
	whead   int
	delayed []*core.Request // set aside by a DELAY policy, from dhead
	dhead   int
	// soonest is the earliest deadline of a waiting entry, or 0 when none
	// has one; expire skips the level until then.
	soonest uint64
}

func (l *level) len() int { return len(l.waiting) - l.whead + len(l.delayed) - l.dhead }

// at returns the i-th request of the level in queue order (waiting, then
// delayed).
func (l *level) at(i int) *core.Request {
	n := len(l.waiting) - l.whead
	if i < n {
		return l.waiting[l.whead+i]
	}
	return l.delayed[l.dhead+i-n]
}

// remove takes the i-th request out of the level.
func (l *level) remove(i int) {
	if n := len(l.waiting) - l.whead; i < n {
		l.waiting = slices.Delete(l.waiting, l.whead+i, l.whead+i+1)
	} else {
		l.delayed = slices.Delete(l.delayed, l.dhead+i-n, l.dhead+i-n+1)
	}
}

// pop takes the level's first request (the level is not empty).
func (l *level) pop() *core.Request {
	if l.whead < len(l.waiting) {
		return popFront(&l.waiting, &l.whead)
	}
	return popFront(&l.delayed, &l.dhead)
}

// popFront takes the first entry of *q from *head, compacting as the
// batcher's single queue always did.
func popFront(q *[]*core.Request, head *int) *core.Request {
	e := (*q)[*head]
	(*q)[*head] = nil
	*head++
	if *head == len(*q) {
		*q, *head = (*q)[:0], 0
	} else if *head > 64 && *head*2 > len(*q) {
		n := copy(*q, (*q)[*head:])
		clear((*q)[n:])
		*q, *head = (*q)[:n], 0
	}
	return e
}

// priorityQueue is the batcher's queue: its levels in priority order. The
// batcher's mutex guards it.
type priorityQueue struct {
	levels  []*level // by priority, highest (lowest number) first
	count   int
	levelsN uint64 // priority_levels; 0: one level
	deflt   uint64 // default_priority_level
	policy  queuePolicy
	timed   bool // a policy may time a request out
}

// newPriorityQueue returns the queue dynamic batching db describes (nil:
// no dynamic batching, one level without a policy).
func newPriorityQueue(db *configpb.ModelDynamicBatching) *priorityQueue {
	q := &priorityQueue{levelsN: uint64(db.GetPriorityLevels()), deflt: uint64(db.GetDefaultPriorityLevel()),
		policy: policyOf(db.GetDefaultQueuePolicy())}
	q.timed = q.policy.timeout != 0
	if q.levelsN == 0 {
		q.levels = []*level{{policy: q.policy, permanent: true}}
		return q
	}
	for p, pol := range db.GetPriorityQueuePolicy() {
		q.levels = append(q.levels, &level{priority: p, policy: policyOf(pol), permanent: true})
		q.timed = q.timed || pol.GetDefaultTimeoutMicroseconds() != 0
	}
	sort.Slice(q.levels, func(i, j int) bool { return q.levels[i].priority < q.levels[j].priority })
	return q
}

// priorityOf returns the level a request of priority p waits at: p when it
// is one of the model's levels, else the default level, as Triton reads a
// request's priority.
func (q *priorityQueue) priorityOf(p uint64) uint64 {
	if q.levelsN == 0 {
		return 0
	}
	if p == 0 || p > q.levelsN {
		return q.deflt
	}
	return p
}

// levelOf returns the level of priority p, adding it (with the default
// policy) when it has none yet.
func (q *priorityQueue) levelOf(p uint64) *level {
	i := sort.Search(len(q.levels), func(i int) bool { return q.levels[i].priority >= p })
	if i < len(q.levels) && q.levels[i].priority == p {
		return q.levels[i]
	}
	l := &level{priority: p, policy: q.policy}
	q.levels = slices.Insert(q.levels, i, l)
	return l
}

// full reports whether the level r goes to holds its max_queue_size.
func (q *priorityQueue) full(r *core.Request) (bool, int) {
	l := q.levelOf(q.priorityOf(r.Priority()))
	return l.policy.maxSize > 0 && l.len() >= l.policy.maxSize, l.policy.maxSize
}

// push queues r at its level, timed from now.
func (q *priorityQueue) push(r *core.Request, now uint64) {
	l := q.levelOf(q.priorityOf(r.Priority()))
	d := l.policy.deadline(r, now)
	r.SetQueueDeadline(d)
	if d != 0 && (l.soonest == 0 || d < l.soonest) {
		l.soonest = d
	}
	l.waiting = append(l.waiting, r)
	q.count++
}

func (q *priorityQueue) len() int { return q.count }

// at returns the request at position i of the queue order; i < len.
func (q *priorityQueue) at(i int) *core.Request {
	for _, l := range q.levels {
		if n := l.len(); i < n {
			return l.at(i)
		}
		i -= l.len()
	}
	panic("dynbatch: queue position out of range")
}

// remove takes the request at position i out of the queue.
func (q *priorityQueue) remove(i int) {
	for _, l := range q.levels {
		if n := l.len(); i < n {
			l.remove(i)
			q.count--
			return
		}
		i -= l.len()
	}
}

// pop takes the first request in queue order; the queue is not empty.
func (q *priorityQueue) pop() *core.Request {
	for i, l := range q.levels {
		if l.len() == 0 {
			continue
		}
		r := l.pop()
		q.count--
		if l.len() == 0 && !l.permanent {
			q.levels = slices.Delete(q.levels, i, i+1)
		}
		return r
	}
	panic("dynbatch: pop from an empty queue")
}

// expire applies the levels' timeouts at now: a waiting request past its
// deadline is set aside (DELAY) or returned to be rejected.
func (q *priorityQueue) expire(now uint64) (rejected []*core.Request) {
	if !q.timed {
		return nil
	}
	for _, l := range q.levels {
		if l.soonest == 0 || now <= l.soonest {
			continue
		}
		l.soonest = 0
		kept := l.waiting[:l.whead]
		for _, r := range l.waiting[l.whead:] {
			switch d := r.QueueDeadline(); {
			case d == 0 || now <= d:
				kept = append(kept, r)
				if d != 0 && (l.soonest == 0 || d < l.soonest) {
					l.soonest = d
				}
			case l.policy.delay:
				r.SetQueueDeadline(0) // set aside: it waits as long as it takes
				l.delayed = append(l.delayed, r)
			default:
				rejected = append(rejected, r)
				q.count--
			}
		}
		clear(l.waiting[len(kept):])
		l.waiting = kept
	}
	return rejected
}

// drain empties the queue and returns what it held, in queue order.
func (q *priorityQueue) drain() []*core.Request {
	out := make([]*core.Request, 0, q.count)
	for q.count > 0 {
		out = append(out, q.pop())
	}
	return out
}
