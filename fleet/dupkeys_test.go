package fleet

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// TestARepeatedKeyIsAnErrorNamingBothPlaces: two "spark-node-03" entries in
// a bundle's nodes used to keep only the second, dropping what the first
// reported. Both places and the path must be named.
func TestARepeatedKeyIsAnErrorNamingBothPlaces(t *testing.T) {
	data, err := os.ReadFile("../examples/spark-fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	// Rename node-02's report to node-03's id: the bundle now lists
	// spark-node-03 twice.
	const from = `"spark-node-02": {` + "\n" + `      "profile"`
	i := bytes.Index(data, []byte(from))
	if i < 0 {
		t.Fatalf("the example has no %q", from)
	}
	twice := bytes.Replace(data, []byte(from), []byte(`"spark-node-03": {`+"\n"+`      "profile"`), 1)
	first := bytes.Index(twice, []byte(`"spark-node-03": {`+"\n"+`      "profile"`))
	second := bytes.LastIndex(twice, []byte(`"spark-node-03": {`+"\n"+`      "profile"`))
	if first == second {
		t.Fatal("the edit made no repeat")
	}
	fl, fc := jsonpos.Position(twice, first)
	sl, sc := jsonpos.Position(twice, second)
	_, err = ParseBundle(twice, "fleet.json")
	want := []string{"fleet.json:" + strconv.Itoa(sl) + ":" + strconv.Itoa(sc) + ":", `$.nodes["spark-node-03"]`,
		`duplicate key "spark-node-03"`, "first at line " + strconv.Itoa(fl) + ", column " + strconv.Itoa(fc)}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("ParseBundle = %v, want it to say %q", err, w)
		}
	}

	// Inside a document the bundle holds, too.
	cfg := mutate(t, `1`, "config", "runtimePolicy", "maxMemoryUtilization")
	cfg = bytes.Replace(cfg, []byte(`"maxMemoryUtilization": 1`), []byte(`"maxMemoryUtilization": 1, "maxMemoryUtilization": 0.5`), 1)
	if _, err := ParseBundle(cfg, "fleet.json"); err == nil || !strings.Contains(err.Error(), `$.config.runtimePolicy.maxMemoryUtilization: duplicate key "maxMemoryUtilization"`) {
		t.Errorf("ParseBundle = %v, want the config's repeated key named", err)
	}
}
