package rungroup_test

import (
	"errors"
	"fmt"

	"github.com/druidiceberg/sidecar/internal/rungroup"
)

// A server stops when the signal component returns, and what it used is
// closed after it.
func Example() {
	var g rungroup.Group
	signal := make(chan struct{})
	g.Add(func() error {
		<-signal
		fmt.Println("signal")
		return nil
	}, func(error) { fmt.Println("not ready") })
	stop := make(chan struct{})
	g.Add(func() error {
		<-stop
		return errors.New("server closed")
	}, func(error) {
		fmt.Println("drain")
		close(stop)
	})
	g.AddStop(func() { fmt.Println("close catalog") })
	close(signal)
	fmt.Println("run:", g.Run())
	// Output:
	// signal
	// not ready
	// drain
	// close catalog
	// run: <nil>
}
