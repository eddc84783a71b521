package druidsim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The cluster's task slots. Each worker (a MiddleManager or Indexer) runs
// at most druid.worker.capacity tasks; the Overlord's task runner hands a
// waiting task the next free slot, in the order the tasks were queued.
//
// An MSQ statement is a controller task (query_controller) that, once it
// runs, submits its workers (query_worker) to the same queue
// (MSQWorkerTaskLauncher.runNewTasks): maxNumTasks Druid tasks in all, the
// controller's slot held while its workers wait. Controllers queued ahead
// of those workers can take every slot, and then no worker starts: each
// controller fails when a worker has not started within
// maxTaskStartDelayMillis of its submission and of the last worker that
// did start (MSQWorkerTaskLauncher.TaskTracker.didRunTimeOut), with
// TaskStartTimeoutFault. That is why apache/druid#16889 caps the slots
// controllers may take (druid.indexer.queue.controllerTaskSlotRatio), and
// why a client that submits statements must pace them.
//
// An index_parallel task is a supervisor and, with maxNumConcurrentSubTasks
// above 1, that many subtasks; they wait for slots without a deadline.

// task is one submitted task and its place on the cluster.
type task struct {
	id       string
	sub      Submission
	ctx      context.Context
	state    string // RUNNING, SUCCESS, FAILED
	errorMsg string
	polls    int
	lost     bool

	// need is the Druid tasks it runs: the controller (or supervisor)
	// first.
	need int
	msq  bool
	// started counts those running; lastStart is when the latest
	// started (or the workers were submitted), allAt when the last one
	// did. launched says the controller submitted its workers, which it
	// does once it has started up, at launchAt.
	started   int
	lastStart time.Time
	allAt     time.Time
	launched  bool
	launchAt  time.Time
	ended     bool
	// timedOut is the TaskStartTimeout fault of a controller whose
	// workers did not start in time.
	timedOut string
}

// runnerState is the task's RunnerTaskState as the status reports it in
// runnerStatusCode: PENDING while it waits for a slot, RUNNING, NONE once
// it ended.
func (t *task) runnerState() string {
	switch {
	case t.ended || t.state != "RUNNING":
		return "NONE"
	case t.started == 0:
		return "PENDING"
	}
	return "RUNNING"
}

// slots is the state of the task slots.
type slots struct {
	at   time.Time
	used int
	// inFlight counts the Druid tasks of tasks submitted and not ended;
	// peak is its most.
	inFlight, peak int
	// waiting holds one entry per Druid task waiting for a slot, in
	// queue order; running the tasks with a started Druid task.
	waiting []*task
	running []*task
}

// queue submits t's controller (or supervisor) at now.
func (sl *slots) queue(t *task, now time.Time) {
	t.need, t.msq = demand(t.sub), t.sub.Task == nil
	sl.waiting = append(sl.waiting, t)
	sl.inFlight += t.need
	sl.peak = max(sl.peak, sl.inFlight)
}

// clock is how long things take on the cluster.
type clock struct {
	// startup is how long a controller (or supervisor) runs before it
	// submits its workers (or subtasks): a peon's JVM starting and the
	// query being planned.
	startup time.Duration
	// run is how long a task runs once its Druid tasks all started.
	run time.Duration
	// timeout is how long an MSQ worker may wait for a slot.
	timeout time.Duration
}

// advance runs the cluster from its last time to now, event by event:
// free slots go to waiting tasks, controllers submit their workers once
// started up, tasks whose Druid tasks all started end after their run
// time, controllers whose workers wait longer than the timeout fail. It
// returns the tasks that ended, in the order they did.
func (sl *slots) advance(now time.Time, capacity int, c clock) []*task {
	if sl.at.IsZero() || now.Before(sl.at) {
		sl.at = now
	}
	var ended []*task
	for {
		sl.allocate(capacity, c.startup)
		var next *task
		var at time.Time
		for _, t := range sl.running {
			var e time.Time
			switch {
			case !t.launched:
				e = t.launchAt
			case t.started == t.need:
				e = t.allAt.Add(c.run)
			case t.msq:
				e = t.lastStart.Add(c.timeout)
			default:
				continue
			}
			if next == nil || e.Before(at) {
				next, at = t, e
			}
		}
		if next == nil || at.After(now) {
			break
		}
		sl.at = at
		if !next.launched {
			next.launched, next.lastStart = true, at
			for range next.need - 1 {
				sl.waiting = append(sl.waiting, next)
			}
			if next.need == 1 {
				next.allAt = at
			}
			continue
		}
		if next.started < next.need {
			next.timedOut = fmt.Sprintf("TaskStartTimeout: Unable to launch [%d] workers out of the total [%d] worker tasks "+
				"within [%d] seconds of the last successful worker launch. There might be insufficient available slots to "+
				"start all worker tasks simultaneously. Try lowering 'maxNumTasks' in your query context to a number that "+
				"fits within your available task capacity, or try increasing capacity.",
				next.need-next.started, next.need-1, int(c.timeout.Seconds()))
		}
		sl.end(next)
		ended = append(ended, next)
	}
	sl.at = now
	return ended
}

// allocate hands free slots to waiting Druid tasks, at sl.at. A
// controller that starts submits its workers startup later, behind
// whatever waits then.
func (sl *slots) allocate(capacity int, startup time.Duration) {
	for len(sl.waiting) > 0 && (capacity <= 0 || sl.used < capacity) {
		t := sl.waiting[0]
		sl.waiting = sl.waiting[1:]
		sl.used++
		t.started++
		t.lastStart = sl.at
		if t.started == 1 {
			sl.running = append(sl.running, t)
			t.launchAt = sl.at.Add(startup)
		}
		if t.started == t.need {
			t.allAt = sl.at
		}
	}
}

// end frees t's slots and drops what of it still waits.
func (sl *slots) end(t *task) {
	t.ended = true
	sl.used -= t.started
	sl.inFlight -= t.need
	sl.running = slices.DeleteFunc(sl.running, func(x *task) bool { return x == t })
	sl.waiting = slices.DeleteFunc(sl.waiting, func(x *task) bool { return x == t })
}

// demand is the Druid tasks a submission runs. An SQL task runs
// maxNumTasks of them, the controller included (MultiStageQueryContext:
// default 2); an index_parallel task its supervisor and, with
// maxNumConcurrentSubTasks above 1 (ParallelIndexTuningConfig: default
// 1, which runs sequentially in the supervisor), that many subtasks.
func demand(sub Submission) int {
	if sub.Task == nil {
		switch n := sub.Context["maxNumTasks"].(type) {
		case float64:
			return max(int(n), 2)
		case int:
			return max(n, 2)
		}
		return 2
	}
	var t indexTask
	if json.Unmarshal(sub.Task, &t) != nil {
		return 1
	}
	if n := t.Spec.TuningConfig.MaxNumConcurrentSubTasks; n != nil && *n > 1 {
		return 1 + *n
	}
	return 1
}
