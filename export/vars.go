package export

import (
	"fmt"
	"strings"

	"github.com/go-air/gini/z"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/model"
)

// Var is one variable of the instance and what it stands for. Fields past
// Meaning are set where they apply.
type Var struct {
	Var     int            `json:"var"`
	Name    string         `json:"name"`
	Meaning encode.Meaning `json:"meaning"`
	// LP is the variable's name in the LP file; empty for variables that
	// only the CNF side has.
	LP string `json:"lp,omitempty"`
	// Linear is true for variables of the linear model (OPB, LP).
	Linear    bool            `json:"linear,omitempty"`
	Variant   string          `json:"variant,omitempty"`
	Nodes     []string        `json:"nodes,omitempty"`
	Residency model.Residency `json:"residency,omitempty"`
	// Source is the demand source (alias id or model:<id>); Alias is set
	// when it is an alias.
	Source string `json:"source,omitempty"`
	Alias  string `json:"alias,omitempty"`
	Model  string `json:"model,omitempty"`
	// Label names a pin or cordon.
	Label string `json:"label,omitempty"`
	// About says what the variable stands for, in operator terms.
	About string `json:"about"`
}

// Vars lists every variable, by number (index 0 is unused).
func (in *Instance) Vars() []Var { return in.vars }

// VarByLP finds a variable by its LP name.
func (in *Instance) VarByLP(name string) (int, bool) {
	v, ok := in.lpIndex[name]
	return v, ok
}

// auxiliary meanings are encoding machinery, not decisions or costs.
func auxiliary(m encode.Meaning) bool {
	switch m {
	case encode.MeanMDD, encode.MeanTotalizer, encode.MeanLadder, encode.MeanSymmetry,
		encode.MeanUnused, encode.MeanActivation, encode.MeanKeep:
		return true
	}
	return false
}

// describe fills in.vars from the encoding's tables: structured meanings
// for decision variables, the encoder's name for the rest.
func (in *Instance) describe() {
	e := in.Enc
	p := e.Pool
	in.vars = make([]Var, e.NumVars())
	for v := 1; v < e.NumVars(); v++ {
		vi := e.Info(z.Var(v))
		vi.Name = e.VarName(z.Var(v))
		in.vars[v] = Var{Var: v, Name: vi.Name, Meaning: vi.Meaning, About: aboutDerived(vi)}
	}
	at := func(m z.Lit) *Var {
		if in.isConst(m) || m == z.LitNull || int(m.Var()) >= len(in.vars) {
			return nil
		}
		return &in.vars[m.Var()]
	}
	in.vars[e.T.Var()].About = "constant true"
	for _, l := range e.Lanes {
		id := p.Variants[l.Variant].ID
		if x := at(l.Lit); x != nil {
			x.Variant, x.Nodes = id, l.Nodes
			x.About = fmt.Sprintf("lane %s on %s", id, l.Key)
		}
		if l.Resident != l.Lit {
			if x := at(l.Resident); x != nil {
				x.Variant, x.Nodes = id, l.Nodes
				x.About = fmt.Sprintf("lane %s on %s holds its memory (always or preferred)", id, l.Key)
			}
		}
		if l.Always != l.Lit {
			if x := at(l.Always); x != nil {
				x.Variant, x.Nodes = id, l.Nodes
				x.About = fmt.Sprintf("lane %s on %s is always resident", id, l.Key)
			}
		}
	}
	for vi, vl := range e.Variants {
		id := p.Variants[vi].ID
		if x := at(vl.Placed); x != nil {
			x.Variant = id
			x.About = fmt.Sprintf("variant %s is placed", id)
		}
		for ri, r := range vl.Res {
			if r == vl.Placed {
				continue // a fixed residency is the placement itself
			}
			if x := at(r); x != nil {
				x.Variant, x.Residency = id, model.Residencies[ri]
				x.About = fmt.Sprintf("variant %s runs %s", id, model.Residencies[ri])
			}
		}
	}
	for _, s := range e.Sources {
		alias := ""
		if s.Alias >= 0 {
			alias = s.ID
		}
		what := sourceText(s)
		if x := at(s.U); x != nil {
			x.Source, x.Alias = s.ID, alias
			x.About = what + " is uncovered (level 1)"
		}
		if x := at(s.E); x != nil {
			x.Source, x.Alias = s.ID, alias
			x.About = what + " is served first by an external model although a local one could run (level 2)"
		}
		if x := at(s.Viol); x != nil {
			x.Source, x.Alias = s.ID, alias
			x.About = what + " breaks its SLO (level 3)"
		}
		for _, r := range s.Routes {
			x := at(r.Lit)
			if x == nil {
				continue
			}
			x.Source, x.Alias, x.Model = s.ID, alias, r.Model
			if r.Variant >= 0 {
				x.Variant = p.Variants[r.Variant].ID
				x.About = fmt.Sprintf("%s is served first by %s on lane %s", what, r.Model, x.Variant)
			} else {
				x.About = fmt.Sprintf("%s is served first by external %s", what, r.Model)
			}
		}
	}
	for _, a := range e.Assumptions {
		if x := at(a.Lit); x != nil {
			x.Label = a.Label
			x.About = fmt.Sprintf("%s %s (fixed true)", a.Kind, a.Label)
		}
	}
	for _, r := range in.rows {
		for _, t := range r.Terms {
			in.vars[t.Var].Linear = true
		}
	}
	obj := in.Objective()
	for _, t := range obj.Terms {
		in.vars[t.Var].Linear = true
	}
	// The LP file needs one variable for an empty objective, and an
	// impossible empty row is written on the constant.
	needT := len(obj.Terms) == 0
	for _, r := range in.rows {
		needT = needT || (len(r.Terms) == 0 && !constHolds(r))
	}
	if needT {
		in.vars[e.T.Var()].Linear = true
	}
	in.lpNames()
}

func sourceText(s encode.Source) string {
	if s.Alias >= 0 {
		return "alias " + s.ID
	}
	return s.ID + " (direct requests)"
}

// lpNames gives every linear variable a CPLEX LP name: the encoder's name
// with every run of other characters than letters and digits turned into
// one "_", prefixed "v_" where it would start with a digit or an "e" (read
// as an exponent by some parsers), cut to 200 bytes, and suffixed "_2",
// "_3" ... when taken. Names are assigned in variable order, so they are
// deterministic.
func (in *Instance) lpNames() {
	in.lpIndex = map[string]int{}
	taken := map[string]bool{}
	for v := range in.vars {
		x := &in.vars[v]
		if v == 0 || !x.Linear {
			continue
		}
		x.LP = unique(taken, lpSafe(sanitize(x.Name, 200), "v_"))
		in.lpIndex[x.LP] = v
	}
}

// sanitize keeps ASCII letters and digits, turns every other run into
// one "_" and trims "_" at both ends.
func sanitize(s string, limit int) string {
	var b strings.Builder
	under := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteByte(c)
			continue
		}
		under = true
	}
	out := b.String()
	if len(out) > limit {
		out = strings.TrimRight(out[:limit], "_")
	}
	return out
}

// aboutDerived says what a derived variable stands for, from the
// structured fields the encoder sets on its info, for variables the
// encoding's tables do not point at; others keep the encoder's name.
func aboutDerived(vi encode.VarInfo) string {
	nodes := strings.Join(vi.Nodes, "+")
	switch vi.Meaning {
	case encode.MeanLatency:
		return fmt.Sprintf("%s served by %s on lane %s running %s (level-4 latency)", vi.Source, vi.Model, vi.Variant, vi.Residency)
	case encode.MeanStart:
		return fmt.Sprintf("lane %s starts or moves (level-4 churn: load time and hysteresis)", vi.Variant)
	case encode.MeanStop:
		return fmt.Sprintf("lane %s stops or leaves %s, where it runs now (level-4 churn)", vi.Variant, nodes)
	case encode.MeanChange:
		return fmt.Sprintf("lane %s stays on %s with another residency than now (level-4 churn)", vi.Variant, nodes)
	case encode.MeanReroute:
		return fmt.Sprintf("alias %s is served by another model than now (level-4 hysteresis)", vi.Source)
	case encode.MeanAvailable:
		return fmt.Sprintf("model %s has a placed lane (for route pins)", vi.Model)
	}
	return vi.Name
}
