package main

import (
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
)

// catalogRoutes wires one catalog into the router's route families: its
// planner plans, resolves tokens and lists tables; a Differ over the same
// planner and FileIO answers /changes; the reader serves rows and fsys raw
// files.
func catalogRoutes(p *splits.Planner, rd *reader.Reader, fsys icebergio.IO) handlers.Catalog {
	typ, name := p.Catalog()
	return handlers.Catalog{
		Type: typ, Name: name,
		Plans:   p,
		Changes: changes.New(p, fsys),
		Splits:  p,
		Rows:    rd,
		Files:   fsys,
		Tables:  p,
	}
}
