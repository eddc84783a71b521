package rungroup

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// TestRunOrder: the first component to return stops the group with its
// error; every interrupt is called once, in the order added, each after
// the one before has returned; Run returns after every execute did.
func TestRunOrder(t *testing.T) {
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	failed := errors.New("listener closed")
	var g Group
	fail := make(chan struct{})
	g.Add(func() error {
		<-fail
		return failed
	}, func(err error) {
		if !errors.Is(err, failed) {
			t.Errorf("interrupt got %v, want the first error", err)
		}
		record("interrupt first")
	})
	for _, name := range []string{"second", "third"} {
		stop := make(chan struct{})
		exited := make(chan struct{})
		g.Add(func() error {
			defer close(exited)
			<-stop
			record("exit " + name)
			return errors.New(name + " stopped")
		}, func(error) {
			record("interrupt " + name)
			close(stop)
			// A blocking interrupt (a server draining) holds the next.
			<-exited
		})
	}
	g.AddStop(func() { record("stop fourth") })
	close(fail)
	if err := g.Run(); !errors.Is(err, failed) {
		t.Fatalf("Run: %v, want the first component's error", err)
	}
	want := []string{"interrupt first", "interrupt second", "exit second", "interrupt third", "exit third", "stop fourth"}
	if !slices.Equal(events, want) {
		t.Fatalf("events %q, want %q", events, want)
	}
}

func TestRunEmpty(t *testing.T) {
	var g Group
	if err := g.Run(); err != nil {
		t.Fatalf("Run of an empty group: %v", err)
	}
}
