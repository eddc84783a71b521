package main

import (
	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
)

// catalogRoutes wires one catalog into the router's route families: the
// catalog lists and loads its tables (each with the FileIO it reads with),
// its planner plans and resolves tokens, a Differ over the planner answers
// /changes, and the catalog's reader serves rows.
func catalogRoutes(cat *catalog.Catalog, p *splits.Planner, rd *reader.Reader) handlers.Catalog {
	return handlers.Catalog{
		Type: cat.Type(), Name: cat.Name(),
		Plans:   p,
		Changes: changes.New(p),
		Splits:  p,
		Rows:    rd,
		Tables:  cat,
	}
}
