package cli

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/benchmarks"
)

// charWidth is the width of an average character as a share of the font
// size, as the picture's own layout measures text.
const charWidth = 0.62

// TestPicturesStayLegibleFrom3To256Nodes draws plans of 3, 64 and 256
// nodes, and the resilience picture: each has its own title, stays
// within a size a screen can scroll, keeps the lines under its cards to a
// fifth of its height (320 px in a small one), and no two of its texts overlap, as its own layout
// places and measures them. rsvg-convert renders each to a PNG of the
// size the SVG states.
func TestPicturesStayLegibleFrom3To256Nodes(t *testing.T) {
	sparkFleet, err := filepath.Abs(spark)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	fleets := map[string]string{"3": sparkFleet}
	sizes := []string{"64x250", "256x1000"}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, size := range sizes {
		sz, err := benchmarks.ParseSize(size)
		if err != nil {
			t.Fatal(err)
		}
		data, err := benchmarks.Generate(sz.Spec(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(size+".json", data, 0o644); err != nil {
			t.Fatal(err)
		}
		fleets[strings.Split(size, "x")[0]] = size + ".json"
	}
	tests := []struct {
		name, title string
		args        []string
		maxHeight   float64
	}{
		{"the three Sparks' plan", "poolsolve plan", []string{"plan", "--fleet", fleets["3"]}, 1200},
		{"the three Sparks' worst lost node", "poolsolve resilience", []string{"resilience", "--fleet", fleets["3"], "--time-limit", "3s"}, 1200},
		{"a plan of 64 nodes", "poolsolve plan", []string{"plan", "--fleet", fleets["64"], "--solver", "greedy", "--time-limit", "1s"}, 3000},
		// A quarter of the 256 nodes are 8-GPU boxes, a thin bar per GPU.
		{"a plan of 256 nodes", "poolsolve plan", []string{"plan", "--fleet", fleets["256"], "--solver", "greedy", "--time-limit", "1s"}, 10500},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "256") && testing.Short() {
				t.Skip("draws a 256-node plan")
			}
			file := fmt.Sprintf("picture-%d.svg", i)
			code, _, errOut := run(t, append(tc.args, "--format", "svg", "-o", file)...)
			if code != ExitOK && code != ExitChanges {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			svg := string(data)
			w, h := svgSize(t, svg)
			if title := firstTitle(svg); !strings.HasPrefix(title, tc.title) {
				t.Errorf("the picture's title is %q, want one starting %q", title, tc.title)
			}
			if w > 2000 || h > tc.maxHeight {
				t.Errorf("the picture is %.0f x %.0f px, more than 2000 x %.0f", w, h, tc.maxHeight)
			}
			cards := cardsBottom(svg)
			// A small picture may take a few lines more than a fifth.
			if under := h - cards; under > max(h/5, 320) {
				t.Errorf("%.0f px of text under the cards, more than a fifth of the picture's %.0f", under, h)
			}
			boxes := textBoxes(svg)
			if len(boxes) < 10 {
				t.Fatalf("only %d texts in the picture", len(boxes))
			}
			if a, b, ok := overlapping(boxes); ok {
				t.Errorf("two texts overlap:\n  %q at %.1f,%.1f-%.1f,%.1f\n  %q at %.1f,%.1f-%.1f,%.1f", a.text, a.x0, a.y0, a.x1, a.y1, b.text, b.x0, b.y0, b.x1, b.y1)
			}
			renderPNG(t, file, w, h)
		})
	}
}

var (
	svgRoot   = regexp.MustCompile(`<svg [^>]*width="([0-9.]+)" height="([0-9.]+)"`)
	svgTitle  = regexp.MustCompile(`<title>([^<]*)</title>`)
	svgCard   = regexp.MustCompile(`<rect x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)" rx="4"`)
	svgText   = regexp.MustCompile(`<text ([^>]*)>(?:<title>[^<]*</title>)?([^<]*)</text>`)
	svgAttr   = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
	xmlEntity = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'")
)

func svgSize(t *testing.T, svg string) (float64, float64) {
	t.Helper()
	m := svgRoot.FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no <svg> with a width and height")
	}
	w, _ := strconv.ParseFloat(m[1], 64)
	h, _ := strconv.ParseFloat(m[2], 64)
	return w, h
}

func firstTitle(svg string) string {
	if m := svgTitle.FindStringSubmatch(svg); m != nil {
		return xmlEntity.Replace(m[1])
	}
	return ""
}

// cardsBottom is where the lowest node card ends.
func cardsBottom(svg string) float64 {
	bottom := 0.0
	for _, m := range svgCard.FindAllStringSubmatch(svg, -1) {
		y, _ := strconv.ParseFloat(m[1], 64)
		h, _ := strconv.ParseFloat(m[2], 64)
		bottom = max(bottom, y+h)
	}
	return bottom
}

type textBox struct {
	text           string
	x0, y0, x1, y1 float64
}

// textBoxes are the boxes of the picture's texts: from the baseline, the
// font size up, a fifth of it down; as wide as the layout counts it.
func textBoxes(svg string) []textBox {
	var out []textBox
	for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
		attrs := map[string]string{}
		for _, a := range svgAttr.FindAllStringSubmatch(m[1], -1) {
			attrs[a[1]] = a[2]
		}
		txt := xmlEntity.Replace(m[2])
		if strings.TrimSpace(txt) == "" {
			continue
		}
		x, _ := strconv.ParseFloat(attrs["x"], 64)
		y, _ := strconv.ParseFloat(attrs["y"], 64)
		size, err := strconv.ParseFloat(attrs["font-size"], 64)
		if err != nil {
			size = 11
		}
		w := float64(utf8.RuneCountInString(txt)) * size * charWidth
		switch attrs["text-anchor"] {
		case "middle":
			x -= w / 2
		case "end":
			x -= w
		}
		out = append(out, textBox{txt, x, y - 0.8*size, x + w, y + 0.2*size})
	}
	return out
}

// overlapping finds two boxes that overlap by more than a pixel both
// ways, sweeping them top to bottom.
func overlapping(bs []textBox) (textBox, textBox, bool) {
	slices.SortFunc(bs, func(a, b textBox) int { return int(math.Copysign(1, a.y0-b.y0)) })
	for i, a := range bs {
		for _, b := range bs[i+1:] {
			if b.y0 >= a.y1-1 {
				break
			}
			if min(a.x1, b.x1)-max(a.x0, b.x0) > 1 && min(a.y1, b.y1)-max(a.y0, b.y0) > 1 {
				return a, b, true
			}
		}
	}
	return textBox{}, textBox{}, false
}

// renderPNG draws the SVG with rsvg-convert and checks the PNG is the
// size the SVG states. POOLSOLVE_KEEP_PNG=DIR keeps a copy in DIR, to be
// looked at.
func renderPNG(t *testing.T, file string, w, h float64) {
	t.Helper()
	if _, err := exec.LookPath("rsvg-convert"); err != nil {
		const msg = "rsvg-convert not installed (apt-get install librsvg2-bin)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; .ci/run installs it, so CI must have it", msg)
		}
		t.Log(msg + ": not rendered")
		return
	}
	png := strings.TrimSuffix(file, ".svg") + ".png"
	if out, err := exec.Command("rsvg-convert", "-o", png, file).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("rsvg-convert: %v: %s", err, out)
	}
	data, err := os.ReadFile(png)
	if err != nil || len(data) < 24 || string(data[1:4]) != "PNG" {
		t.Fatalf("rsvg-convert wrote no PNG: %v", err)
	}
	pw, ph := binary.BigEndian.Uint32(data[16:20]), binary.BigEndian.Uint32(data[20:24])
	if math.Abs(float64(pw)-w) > 1 || math.Abs(float64(ph)-h) > 1 {
		t.Errorf("the PNG is %d x %d px, the SVG says %.0f x %.0f", pw, ph, w, h)
	}
	if dir := os.Getenv("POOLSOLVE_KEEP_PNG"); dir != "" {
		os.WriteFile(filepath.Join(dir, filepath.Base(png)), mustRead(t, png), 0o644)
	}
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestOverlappingFindsTextsThatOverlap(t *testing.T) {
	tests := []struct {
		name  string
		boxes []textBox
		want  bool
	}{
		{"two texts on one line, one after the other, do not overlap", []textBox{{"a", 0, 0, 10, 10}, {"b", 12, 0, 20, 10}}, false},
		{"two lines one under the other do not overlap", []textBox{{"a", 0, 0, 10, 10}, {"b", 0, 10, 10, 20}}, false},
		{"a label running into the next overlaps", []textBox{{"a", 0, 0, 10, 10}, {"b", 5, 2, 20, 12}}, true},
		{"a line drawn over another, further down the list, overlaps", []textBox{{"c", 0, 40, 5, 50}, {"a", 0, 0, 100, 10}, {"b", 50, 5, 60, 15}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, got := overlapping(tc.boxes); got != tc.want {
				t.Errorf("overlapping = %v, want %v", got, tc.want)
			}
		})
	}
}
