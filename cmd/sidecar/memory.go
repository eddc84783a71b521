package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// defaultDeleteBound is the most one decoded delete file may hold in a
// sidecar without a memory limit, unless --max-delete-memory says.
const defaultDeleteBound = 1 << 30

// memoryRule is the memory budget of cfg's memory limit, which plans and
// decoded delete files share (none without a limit), and the bound of one
// decoded delete file with the name an error gives it: --max-delete-memory
// when given, else half the budget, else defaultDeleteBound. The budget's
// metrics go on reg.
func memoryRule(cfg config, reg prometheus.Registerer) (*memory.Budget, int64, string) {
	capacity, origin := memory.BudgetOf(cfg.memoryLimit)
	budget := memory.NewBudget(capacity, origin, reg)
	switch {
	case cfg.MaxDeleteMemory > 0:
		return budget, cfg.MaxDeleteMemory, "--max-delete-memory"
	case capacity > 0:
		return budget, capacity / 2, "--max-delete-memory (by default half " + origin + ")"
	}
	return budget, defaultDeleteBound, "--max-delete-memory (by default 1 GiB without a memory limit)"
}
