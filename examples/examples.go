package examples

import (
	"embed"
	"io/fs"
)

// Bundles holds every example bundle, by file name.
//
//go:embed *.json
var Bundles embed.FS

// Names lists the example bundles, sorted.
func Names() []string {
	names, err := fs.Glob(Bundles, "*.json")
	if err != nil {
		// Only a malformed pattern fails, and this one is constant.
		panic("examples: " + err.Error())
	}
	return names
}
