package crosscheck

import (
	"reflect"
	"testing"
)

// The outputs below are the solvers' own, recorded on a six-variable
// instance, so the parsers are tested where the
// solvers are not installed.

func TestParsersReadEachSolversOutput(t *testing.T) {
	names := map[string]int{"x_a_n1": 1, "x_a_n2": 2, "x_b_n1": 3}
	byName := func(s string) (int, bool) { v, ok := names[s]; return v, ok }
	tests := []struct {
		name  string
		parse func(string) (answer, error)
		text  string
		want  answer
	}{
		{"cbc's solution file", func(s string) (answer, error) { return parseCBC(s, byName) },
			"Optimal - objective value 4.00000000\n      1 x_a_n2        1        1\n      2 x_b_n1        1        2\n  **  0 x_a_n1   1e-09   3\n",
			answer{status: "optimal", cost: 4, hasCost: true, vals: map[int]bool{2: true, 3: true}}},
		{"cbc on an infeasible file", func(s string) (answer, error) { return parseCBC(s, byName) },
			"Infeasible - objective value 0.00000000\n", answer{status: "infeasible", vals: map[int]bool{}}},
		{"cbc stopped by its time limit", func(s string) (answer, error) { return parseCBC(s, byName) },
			"Stopped on time - objective value 7.00000000\n", answer{status: "unknown", vals: map[int]bool{}}},
		{"z3 on OPB with a negative optimum", parseZ3,
			"sat\n(define-fun k!17 () Bool\n  false)\n(define-fun k!5 () Bool\n  true)\n(define-fun k!30 () Bool\n  true)\n   (- 1)\n",
			answer{status: "optimal", cost: -1, hasCost: true, vals: map[int]bool{5: true, 30: true}}},
		{"z3 without an objective", parseZ3, "sat\n(define-fun k!2 () Bool\n  true)\n",
			answer{status: "satisfiable", vals: map[int]bool{2: true}}},
		{"z3 on an infeasible file", parseZ3, "unsat\n", answer{status: "infeasible", vals: map[int]bool{}}},
		{"z3 out of time", parseZ3, "timeout\n", answer{status: "unknown", vals: map[int]bool{}}},
		{"minisat+", parseCompetition,
			"c Found solution: 4\nc Optimal solution: 4\ns OPTIMUM FOUND\nv -x1 x2 x3 -x4 x5 -x6\n",
			answer{status: "optimal", cost: 4, hasCost: true, vals: map[int]bool{2: true, 3: true, 5: true}}},
		{"clasp on OPB", parseCompetition,
			"c Solving...\no 4\nc Answer: 1\nv -x1 x2 x3 -x4 x5 -x6\ns OPTIMUM FOUND\nc Optimization   : 4\n",
			answer{status: "optimal", cost: 4, hasCost: true, vals: map[int]bool{2: true, 3: true, 5: true}}},
		{"clasp on WCNF keeps only the last of its models", parseCompetition,
			"c Answer: 1\nv 1 2 -3\nv 4 0\no 2\nc Answer: 2\nv 1 -2 3\nv -4 0\no 0\ns OPTIMUM FOUND\nc Optimization   : 0\n",
			answer{status: "optimal", cost: 0, hasCost: true, vals: map[int]bool{1: true, 3: true}}},
		{"clasp on an unsatisfiable CNF", parseCompetition, "s UNSATISFIABLE\n", answer{status: "infeasible", vals: map[int]bool{}}},
		{"HiGHS through highs.js", func(s string) (answer, error) { return parseHiGHS(s, byName) },
			`{"status":"Optimal","objective":4,"ones":["x_a_n2","x_b_n1"]}` + "\n",
			answer{status: "optimal", cost: 4, hasCost: true, vals: map[int]bool{2: true, 3: true}}},
		{"HiGHS on an infeasible file", func(s string) (answer, error) { return parseHiGHS(s, byName) },
			`{"status":"Infeasible","objective":null,"ones":[]}`, answer{status: "infeasible", vals: map[int]bool{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse(tc.text)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParsersRejectOutputTheyCannotRead(t *testing.T) {
	byName := func(string) (int, bool) { return 0, false }
	if _, err := parseCBC("Optimal - objective value 1\n 0 ghost 1 1\n", byName); err == nil {
		t.Errorf("cbc: a variable the instance does not have was accepted")
	}
	if _, err := parseCompetition("s OPTIMUM FOUND\nv x1 xq\n"); err == nil {
		t.Errorf("competition: a malformed literal was accepted")
	}
	if _, err := parseZ3("sat\n(define-fun k!1 () Bool\n  true)\n   many\n"); err == nil {
		t.Errorf("z3: a malformed objective was accepted")
	}
}
