package plan_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
)

// svgPlans are real plans, as `poolsolve plan --format json` wrote them
// (testdata/README.md has the commands), drawn to <name>.svg.golden.
var svgPlans = []string{"spark-fleet", "64x250"}

func readPlan(t *testing.T, name string) (*plan.Plan, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p plan.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &p, data
}

func svgOf(t *testing.T, p *plan.Plan) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := plan.WriteSVG(&buf, p); err != nil {
		t.Fatalf("WriteSVG: %v", err)
	}
	return buf.Bytes()
}

// TestSVGGolden draws the stored plans and compares the pictures with
// the golden files (UPDATE_GOLDEN=1 rewrites them; look at the PNG before
// committing one). The stored plan must read back to the very document,
// so the picture is of a plan the command wrote and nothing was lost.
func TestSVGGolden(t *testing.T) {
	for _, name := range svgPlans {
		t.Run(name, func(t *testing.T) {
			p, data := readPlan(t, name)
			var again bytes.Buffer
			if err := plan.WriteJSON(&again, p); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), data) {
				t.Fatalf("testdata/%s.plan.json does not read back to itself:\n%s", name, golden.Diff(string(data), again.String()))
			}
			svg := svgOf(t, p)
			if !bytes.Equal(svg, svgOf(t, p)) {
				t.Fatal("the same plan drew two different pictures")
			}
			golden.Check(t, name+".svg.golden", svg)
		})
	}
}

// svgCases are every plan the tests draw: the stored ones and the
// fixtures (a cordoned node, a steady pool, an infeasible one).
func svgCases(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	out := map[string]*plan.Plan{}
	for _, name := range svgPlans {
		out[name], _ = readPlan(t, name)
	}
	for _, tc := range goldenCases {
		p, res := tc.make()
		out[tc.name] = plan.Build(p, res, tc.meta)
	}
	return out
}

// svgText is what an SVG says: its texts (titles included) in document
// order, and the texts drawn, with where and how large.
type svgText struct {
	all            string
	width, height  float64
	drawn          []drawnText
	defaultFontPx  float64
	hasXMLNSForSVG bool
}

type drawnText struct {
	x, size float64
	anchor  string
	text    string // without its <title>
}

// parseSVG reads the document as XML: a malformed one fails here.
func parseSVG(t *testing.T, data []byte) svgText {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var out svgText
	var all strings.Builder
	var stack []string
	var cur *drawnText
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	num := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("not a number: %q", s)
		}
		return x
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
			switch e.Name.Local {
			case "svg":
				out.width, out.height = num(attr(e, "width")), num(attr(e, "height"))
				out.defaultFontPx = num(attr(e, "font-size"))
				out.hasXMLNSForSVG = e.Name.Space == "http://www.w3.org/2000/svg"
			case "text":
				size := out.defaultFontPx
				if s := attr(e, "font-size"); s != "" {
					size = num(s)
				}
				cur = &drawnText{x: num(attr(e, "x")), size: size, anchor: attr(e, "text-anchor")}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if e.Name.Local == "text" && cur != nil {
				out.drawn = append(out.drawn, *cur)
				cur = nil
			}
		case xml.CharData:
			all.Write(e)
			all.WriteByte('\n')
			if cur != nil && stack[len(stack)-1] == "text" {
				cur.text += string(e)
			}
		}
	}
	out.all = all.String()
	return out
}

func TestSVGIsWellFormedAndNamesEveryNode(t *testing.T) {
	for name, p := range svgCases(t) {
		t.Run(name, func(t *testing.T) {
			doc := parseSVG(t, svgOf(t, p))
			if !doc.hasXMLNSForSVG {
				t.Error("the root is not an SVG element")
			}
			for _, n := range p.Nodes {
				if !strings.Contains(doc.all, n.ID) {
					t.Errorf("node %s is not in the SVG's text", n.ID)
				}
			}
		})
	}
}

// TestSVGStaysLegible holds every drawn text inside the picture, at a
// size that can be read, at 3 nodes and at 64: long names are cut, not
// run off the edge.
func TestSVGStaysLegible(t *testing.T) {
	for name, p := range svgCases(t) {
		t.Run(name, func(t *testing.T) {
			doc := parseSVG(t, svgOf(t, p))
			for _, d := range doc.drawn {
				if d.size < 7 {
					t.Errorf("%q is drawn at %.1f px", d.text, d.size)
				}
				// DejaVu Sans averages under 0.62 em a character.
				w := float64(utf8.RuneCountInString(d.text)) * d.size * 0.62
				left := d.x
				if d.anchor == "middle" {
					left -= w / 2
				}
				if left < 0 || left+w > doc.width+1 {
					t.Errorf("%q (%.0f px wide at x %.0f) runs outside the %.0f px picture", d.text, w, d.x, doc.width)
				}
			}
		})
	}
}

func TestSVGWrapsManyNodesIntoColumns(t *testing.T) {
	small, _ := readPlan(t, "spark-fleet")
	large, _ := readPlan(t, "64x250")
	s, l := parseSVG(t, svgOf(t, small)), parseSVG(t, svgOf(t, large))
	if l.width < 3*s.width/2 {
		t.Errorf("64 nodes draw %.0f px wide against %.0f for 3: not wrapped into columns", l.width, s.width)
	}
	if l.height > 2*l.width {
		t.Errorf("64 nodes draw %.0f px high and %.0f wide: one long column", l.height, l.width)
	}
}

func TestSVGMarksStateAndChanges(t *testing.T) {
	cases := svgCases(t)
	cordoned := string(svgOf(t, cases["cordoned-pair"]))
	for _, want := range []string{
		`stroke-dasharray="4 3"`, // the cordoned card
		">CORDONED (--cordon)<",
		">− stop qwen-image-diffusers (was preferred)<",
		">! manual stop sparkqwen-pair (was always)<",
		"~ qwen38-27b-nvfp4",
		"residency auto → always",
		"6 GiB on spark-node-03 [recipe]; serves openai/whisper-large-v3-turbo; + starts: serves stt",
		"Re-routes: enntity-presence → qwen38-27b-nvfp4, q38fn → qwen38-27b-nvfp4",
		"Uncovered (1): model:Qwen/Qwen-Image-2.1-Diffusers",
		"Rollout: 6 steps in 2 waves",
		"4. [wave 1] − stop qwen-image-diffusers on spark-node-03 (was preferred); model:Qwen/Qwen-Image-2.1-Diffusers loses coverage",
		"3. [wave 1] + start recipe:spark-stt/whisper on spark-node-03 (auto); wait until healthy (load 20 s)",
	} {
		if !strings.Contains(cordoned, want) {
			t.Errorf("the cordoned plan's picture lacks %q", want)
		}
	}
	steady := string(svgOf(t, cases["steady"]))
	for _, want := range []string{
		"No changes. The plan matches what runs now.",
		">TP1 sparkqwen-pair (always): spark-node-01 + spark-node-02<",
		"<title>TP1 sparkqwen-pair</title>", // the link between the two nodes
		"sparkqwen-pair: always, 108 GiB on spark-node-01 [unmanaged]; serves qwen3.8-flash-next; with spark-node-02",
		"qwen38-27b-nvfp4: auto, 40 GiB on spark-node-03",
		"plan budget 111.6 GiB", "admission budget 115.6 GiB",
	} {
		if !strings.Contains(steady, want) {
			t.Errorf("the steady plan's picture lacks %q", want)
		}
	}
	if strings.Contains(steady, "− stop") || strings.Contains(steady, "CORDONED") {
		t.Error("the steady plan's picture marks a stop or a cordon")
	}
	inf := string(svgOf(t, cases["infeasible"]))
	if !strings.Contains(inf, "No plan: the hard constraints") || !strings.Contains(inf, "exceed its plan budget") {
		t.Errorf("the infeasible plan's picture does not say why:\n%.600s", inf)
	}
}

// TestSVGEscapesNamesFromInputs draws names that carry markup, quotes
// and control characters, as input files may: the document stays
// well-formed and says the names as given.
func TestSVGEscapesNamesFromInputs(t *testing.T) {
	node := `n<script>alert("x")</script>&'`
	lane := "lane]]><b>&amp;\x01\x7f"
	p := &plan.Plan{
		Schema: plan.Schema,
		Fleet:  "fleet <&>",
		Nodes: []plan.Node{
			{ID: node, Domains: []plan.Domain{{ID: "unified:0", PlanGb: 100, AdmitGb: 104, HeadroomGb: 4, ResidentGb: 30, FreeGb: 70}},
				Lanes: []plan.Lane{{Variant: lane, Models: []string{"m\"1"}, Residency: model.Always, Draws: []plan.Draw{{Domain: "unified:0", Gb: 30}}}}},
			{ID: "n2", Unavailable: "unreachable: <timeout> & \"more\""},
		},
		Changes: []plan.Change{{Kind: plan.Stop, Subject: "<old>", Nodes: []string{node}, Residency: model.Auto}},
	}
	svg := svgOf(t, p)
	if bytes.Contains(svg, []byte("<script")) || bytes.Contains(svg, []byte("<b>")) || bytes.Contains(svg, []byte("\x01")) {
		t.Fatalf("markup or a control character got through:\n%s", svg)
	}
	doc := parseSVG(t, svg)
	for _, want := range []string{node, "lane]]><b>&amp;", "m\"1", "fleet <&>", "<timeout> & \"more\"", "− stop <old> (was auto)"} {
		if !strings.Contains(doc.all, want) {
			t.Errorf("the picture does not say %q", want)
		}
	}
}

func TestSVGCarriesNoAddress(t *testing.T) {
	for name, p := range svgCases(t) {
		svg := string(svgOf(t, p))
		if n := strings.Count(svg, "://"); n != 1 || !strings.Contains(svg, `xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("%s: %d addresses, want only the SVG namespace", name, n)
		}
		if strings.Contains(svg, "href") {
			t.Errorf("%s: the picture links to something; it must stand alone", name)
		}
	}
}

func TestSVGOfNothing(t *testing.T) {
	if err := plan.WriteSVG(io.Discard, nil); err == nil {
		t.Error("no error for a nil plan")
	}
	doc := parseSVG(t, svgOf(t, &plan.Plan{Schema: plan.Schema}))
	if !strings.Contains(doc.all, "No changes.") {
		t.Errorf("an empty plan's picture does not say it changes nothing:\n%s", doc.all)
	}
}

// TestSVGMarksAMoveAndAManualStart: a lane that moves is marked where it
// arrives and listed where it leaves; a node it keeps is left unmarked.
func TestSVGMarksAMoveAndAManualStart(t *testing.T) {
	dom := []plan.Domain{{ID: "unified:0", PlanGb: 100, AdmitGb: 104, HeadroomGb: 4}}
	lane := func(v string, with ...string) plan.Lane {
		return plan.Lane{Variant: v, Residency: model.Preferred, With: with, Draws: []plan.Draw{{Domain: "unified:0", Gb: 20}}}
	}
	p := &plan.Plan{
		Schema: plan.Schema,
		Nodes: []plan.Node{
			{ID: "a", Domains: dom},
			{ID: "b", Domains: dom, Lanes: []plan.Lane{lane("tp-lane", "c")}},
			{ID: "c", Domains: dom, Lanes: []plan.Lane{lane("tp-lane", "b"), lane("fed-lane")}},
		},
		Changes: []plan.Change{
			{Kind: plan.Move, Subject: "tp-lane", FromNodes: []string{"a", "b"}, Nodes: []string{"b", "c"}, Residency: model.Preferred, Reason: "latency: closer"},
			{Kind: plan.ManualStart, Subject: "fed-lane", LaneKind: model.Federated, Nodes: []string{"c"}, Residency: model.Preferred},
		},
	}
	svg := string(svgOf(t, p))
	for _, want := range []string{
		">→ tp-lane moves to b, c<",
		"tp-lane: preferred, 20 GiB on c; with b; → moves here from a, b: latency: closer",
		"fed-lane: preferred, 20 GiB on c; ! manual start (federated)",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the picture lacks %q", want)
		}
	}
	if strings.Contains(svg, "20 GiB on b; with c; →") {
		t.Error("the move is marked on b, which the lane keeps")
	}
}

// TestSVGRendersToPNG draws every case with rsvg-convert, as a browser
// would: a document the renderer refuses, or draws as nothing, fails.
func TestSVGRendersToPNG(t *testing.T) {
	if _, err := exec.LookPath("rsvg-convert"); err != nil {
		const msg = "rsvg-convert not installed (apt-get install librsvg2-bin)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; .ci/run installs it, so CI must have it", msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	for name, p := range svgCases(t) {
		t.Run(name, func(t *testing.T) {
			svg, png := filepath.Join(dir, name+".svg"), filepath.Join(dir, name+".png")
			if err := os.WriteFile(svg, svgOf(t, p), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("rsvg-convert", "-o", png, svg).CombinedOutput(); err != nil || len(out) > 0 {
				t.Fatalf("rsvg-convert: %v: %s", err, out)
			}
			data, err := os.ReadFile(png)
			if err != nil || len(data) < 5000 || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("PNG of %d bytes, %v", len(data), err)
			}
		})
	}
}

// FuzzSVGNames draws a plan whose node, lane and reason texts are
// arbitrary: the SVG must stay well-formed and say each text that XML
// can hold.
func FuzzSVGNames(f *testing.F) {
	f.Add("spark-node-01", "qwen38-27b-nvfp4", "cordoned (--cordon)")
	f.Add(`<a href="x">&amp;`, "]]>\x00\xff", "\t\n'\"")
	f.Add(strings.Repeat("long-node-name-", 20), strings.Repeat("ü", 300), "")
	f.Fuzz(func(t *testing.T, node, lane, reason string) {
		dom := []plan.Domain{{ID: "unified:0", PlanGb: 10, AdmitGb: 12, HeadroomGb: 2, ResidentGb: 4}}
		p := &plan.Plan{
			Schema: plan.Schema,
			Nodes: []plan.Node{
				{ID: node, Domains: dom, Lanes: []plan.Lane{{Variant: lane, Residency: model.Always, With: []string{"other"},
					Draws: []plan.Draw{{Domain: "unified:0", Gb: 4}}}}},
				{ID: "other", Unavailable: reason, Domains: dom},
			},
			Changes:      []plan.Change{{Kind: plan.Stop, Subject: lane, Nodes: []string{"other"}, Reason: reason}},
			Explanations: []plan.Explanation{{Subject: lane, Reason: reason}},
		}
		svg := svgOf(t, p)
		doc := parseSVG(t, svg)
		for _, s := range []string{node, lane} {
			if xmlSafe(s) && !strings.Contains(doc.all, s) {
				t.Fatalf("the picture does not say %q", s)
			}
		}
	})
}

// xmlSafe reports whether s reaches the picture unchanged: valid UTF-8
// that XML 1.0 can hold, and no white space but single spaces.
func xmlSafe(s string) bool {
	if !utf8.ValidString(s) || strings.Join(strings.Fields(s), " ") != s {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

// TestSVGDrawsBadFiguresInsideTheirBars: figures that are negative or
// not finite, which a hand-edited plan may hold, draw as zero.
func TestSVGDrawsBadFiguresInsideTheirBars(t *testing.T) {
	nan, inf := plan.GiB(math.NaN()), plan.GiB(math.Inf(1))
	p := &plan.Plan{Schema: plan.Schema, Nodes: []plan.Node{{
		ID:      "n",
		Domains: []plan.Domain{{ID: "unified:0", PlanGb: -5, AdmitGb: 10, HeadroomGb: inf, AlwaysGb: -1}, {ID: "device:0", PlanGb: inf, AdmitGb: nan}},
		Lanes: []plan.Lane{
			{Variant: "neg", Residency: model.Always, Draws: []plan.Draw{{Domain: "unified:0", Gb: -3}}},
			{Variant: "pos", Residency: model.Always, Draws: []plan.Draw{{Domain: "unified:0", Gb: 2}}},
			{Variant: "inf", Residency: model.Auto, Draws: []plan.Draw{{Domain: "unified:0", Gb: inf}, {Domain: "device:0", Gb: nan}}},
		},
	}}}
	svg := string(svgOf(t, p))
	parseSVG(t, []byte(svg))
	for _, bad := range []string{"NaN", "Inf", `x="-`, `width="-`, `x1="-`, `x2="-`} {
		if strings.Contains(svg, bad) {
			t.Errorf("the picture holds %q", bad)
		}
	}
}
