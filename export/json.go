package export

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"slices"

	"github.com/go-air/gini/z"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/model"
)

// Schema names the JSON export's document.
const Schema = "poolsolve.instance/v1"

type jsonDoc struct {
	Schema            string        `json:"schema"`
	Source            string        `json:"source,omitempty"`
	MemoryUnitsPerGiB int64         `json:"memoryUnitsPerGiB"`
	MemoryExact       bool          `json:"memoryExact"`
	Objective         jsonObjective `json:"objective"`
	Fixes             []Fix         `json:"fixes"`
	Levels            []jsonLevel   `json:"levels"`
	Vars              []Var         `json:"vars"`
	Rows              []encode.Row  `json:"rows"`
	CNFVars           int           `json:"cnfVars"`
	CNFClauses        int           `json:"cnfClauses"`
}

type jsonObjective struct {
	Level   int           `json:"level,omitempty"`
	Flatten bool          `json:"flatten,omitempty"`
	Weights *[4]int64     `json:"weights,omitempty"`
	Offset  int64         `json:"offset"`
	Terms   []encode.Term `json:"terms"`
}

type jsonLevel struct {
	Level  int           `json:"level"`
	Name   string        `json:"name"`
	Offset int64         `json:"offset"`
	Terms  []encode.Term `json:"terms"`
}

// WriteJSON writes the linear model as a poolsolve.instance/v1 document:
// every variable with its meaning, every row by name (fixes and assumed
// pins included), each level's terms and offset, the exported objective,
// and the size of the CNF side. Two-space indent, one term a line, one
// trailing newline.
func (in *Instance) WriteJSON(w io.Writer) error {
	obj := in.Objective()
	doc := jsonDoc{
		Schema:            Schema,
		Source:            in.opts.Source,
		MemoryUnitsPerGiB: in.Enc.Scale,
		MemoryExact:       in.Enc.Exact,
		Objective:         jsonObjective{Level: obj.Level, Flatten: obj.Flattened, Offset: obj.Offset, Terms: nonNil(obj.Terms)},
		Fixes:             in.opts.Fixes,
		Rows:              slices.Clone(in.rows),
		CNFVars:           in.NumVars(),
	}
	if obj.Flattened {
		w := in.weights
		doc.Objective.Weights = &w
	}
	if doc.Fixes == nil {
		doc.Fixes = []Fix{}
	}
	if doc.Rows == nil {
		doc.Rows = []encode.Row{}
	}
	l := &in.Enc.Linear
	for i := range encode.Levels {
		doc.Levels = append(doc.Levels, jsonLevel{Level: i + 1, Name: model.LevelNames[i], Offset: l.Offsets[i], Terms: nonNil(mergeTerms(l.Objectives[i]))})
	}
	doc.Vars = in.vars[1:]
	in.Clauses(func([]z.Lit) { doc.CNFClauses++ })
	for i := range doc.Rows {
		doc.Rows[i].Terms = nonNil(doc.Rows[i].Terms)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(compactTerms.ReplaceAll(buf.Bytes(), []byte(`{"var": $1, "coef": $2}`)))
	return err
}

// compactTerms puts each term on one line; terms are most of the file.
var compactTerms = regexp.MustCompile(`\{\n\s*"var": (-?\d+),\n\s*"coef": (-?\d+)\n\s*\}`)

func nonNil(ts []encode.Term) []encode.Term {
	if ts == nil {
		return []encode.Term{}
	}
	return ts
}
