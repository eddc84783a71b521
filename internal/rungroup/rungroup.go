// Package rungroup runs a process's components as one group, as Thanos
// runs its own with github.com/oklog/run: each component is an execute
// function, which runs until it fails or is interrupted, and an interrupt
// function, which makes it return. When the first execute returns, every
// interrupt is called, one after the other in the order the components
// were added, and Run returns once every execute has returned, with the
// first one's error.
//
// Calling the interrupts in order is what orders a shutdown: the component
// added first (readiness) stops first, a server's interrupt returns once
// its connections are drained, and what the servers use (catalogs) is
// added after them, so it is closed once nothing serves from it.
package rungroup

// Group is a set of components run together; the zero value is empty.
type Group struct {
	actors []actor
}

type actor struct {
	execute   func() error
	interrupt func(error)
}

// Add adds a component. interrupt must make execute return, and may
// block: the interrupts of the components added after it wait for it.
func (g *Group) Add(execute func() error, interrupt func(error)) {
	g.actors = append(g.actors, actor{execute, interrupt})
}

// AddStop adds a component that has nothing to run: stop is called in
// its turn when the group stops (closing a catalog, say).
func (g *Group) AddStop(stop func()) {
	done := make(chan struct{})
	g.Add(func() error {
		<-done
		return nil
	}, func(error) {
		stop()
		close(done)
	})
}

// Run runs every component, and once the first returns interrupts them
// all in order and waits for every one; it returns the first one's error
// (nil when it returned nil, as a component that saw the stop signal
// does). A group without components returns at once.
func (g *Group) Run() error {
	if len(g.actors) == 0 {
		return nil
	}
	errs := make(chan error, len(g.actors))
	for _, a := range g.actors {
		go func() { errs <- a.execute() }()
	}
	err := <-errs
	for _, a := range g.actors {
		a.interrupt(err)
	}
	for range len(g.actors) - 1 {
		<-errs
	}
	return err
}
