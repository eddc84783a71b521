package memory_test

import (
	"errors"
	"fmt"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// A plan reserves what its files need before it holds it, and gives it
// back when done; a reservation larger than the budget can never fit.
func Example() {
	b := memory.NewBudget(512<<20, "half the Go memory limit", nil)
	r, err := b.Reserve(memory.Plan, 64<<20, 0, "")
	if err != nil {
		fmt.Println(err) // ErrBusy, or an *ExceedsError
		return
	}
	fmt.Println("reserved", r != nil)
	r.Release()

	_, err = b.Reserve(memory.Plan, 1<<30, 0, "")
	var exceeds *memory.ExceedsError
	fmt.Println("1 GiB exceeds the budget:", errors.As(err, &exceeds))
	// Output:
	// reserved true
	// 1 GiB exceeds the budget: true
}
