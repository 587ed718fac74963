// Package version holds the build's version, set with -ldflags at build time.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the release version; `make build` sets it from git describe.
var Version = "dev"

// Info describes the running build.
type Info struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	Commit    string `json:"commit,omitempty"`
}

// Get returns the running build's Info.
func Get() Info {
	info := Info{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.Commit = s.Value
			}
		}
	}
	return info
}

// String renders Info on one line.
func (i Info) String() string {
	s := fmt.Sprintf("hvpa %s (%s, %s)", i.Version, i.GoVersion, i.Platform)
	if i.Commit != "" {
		s += " commit " + i.Commit
	}
	return s
}
