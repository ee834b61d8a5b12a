package inventory

import (
	"fmt"
	"slices"
	"strings"
)

// dockerImageArgs lists local images one per line as repo:tag@digest. The
// braces are docker's own template syntax, passed as one argv element.
var dockerImageArgs = []string{"image", "ls", "--format", "{{.Repository}}:{{.Tag}}@{{.Digest}}"}

// maxImages bounds the images one answer may list.
const maxImages = 10000

// ParseDockerImages reads the output of
// docker image ls --format {{.Repository}}:{{.Tag}}@{{.Digest}} and returns
// every reference a local image can be used by, sorted and without
// duplicates: "repo:tag" when it has a tag and "repo@sha256:..." when it
// has a digest, so a recipe that names either form finds it. Dangling
// images (<none>) are skipped.
func ParseDockerImages(out []byte) ([]string, error) {
	var refs []string
	n := 0
	for i, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if n++; n > maxImages {
			return nil, fmt.Errorf("inventory: docker image ls: more than %d images", maxImages)
		}
		// The repository may hold a registry port (host:5000/x), so cut
		// the digest at the last "@" and the tag at the last ":".
		at := strings.LastIndexByte(line, '@')
		if at < 0 {
			return nil, fmt.Errorf("inventory: docker image ls line %d: no @digest in %q", i+1, clip(line))
		}
		nameTag, digest := line[:at], line[at+1:]
		colon := strings.LastIndexByte(nameTag, ':')
		if colon < 0 {
			return nil, fmt.Errorf("inventory: docker image ls line %d: no :tag in %q", i+1, clip(line))
		}
		repo, tag := nameTag[:colon], nameTag[colon+1:]
		if strings.ContainsAny(line, " \t\"'`$\\") || strings.Contains(tag, "/") {
			return nil, fmt.Errorf("inventory: docker image ls line %d: not an image reference: %q", i+1, clip(line))
		}
		// "<none>" is docker's word for a missing part; any other angle
		// bracket cannot be in a reference.
		for _, part := range []string{repo, tag, digest} {
			if part != "<none>" && strings.ContainsAny(part, "<>") {
				return nil, fmt.Errorf("inventory: docker image ls line %d: not an image reference: %q", i+1, clip(line))
			}
		}
		if repo == "" || repo == "<none>" {
			continue
		}
		if tag != "" && tag != "<none>" {
			refs = append(refs, repo+":"+tag)
		}
		if digest != "" && digest != "<none>" {
			if !strings.Contains(digest, ":") {
				return nil, fmt.Errorf("inventory: docker image ls line %d: bad digest %q", i+1, clip(digest))
			}
			refs = append(refs, repo+"@"+digest)
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs), nil
}
