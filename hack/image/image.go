package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the non-root user and group the image runs as (the chart's securityContext expects it).
const User = "65532:65532"

// Entrypoint is where the binary sits; the chart passes `run --components=...` as arguments.
const Entrypoint = "/hvpa"

// Source is the repository of the image's source label.
const Source = "https://github.com/hvpa-dev/hvpa"

type platformBinary struct{ OS, Arch, Path string }

type options struct {
	Out, Version, Revision string
	Created                time.Time
	Binaries               []platformBinary
}

// Index is the multi-arch index of one image per binary.
func Index(o options) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range o.Binaries {
		img, err := Image(b, o)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", b.OS, b.Arch, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: b.OS, Architecture: b.Arch}}})
	}
	return idx, nil
}

// Image is one platform's image: the binary's layer and the config.
func Image(b platformBinary, o options) (v1.Image, error) {
	bin, err := os.ReadFile(b.Path)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	layer, err := rootfs(bin, o.Created)
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "hack/image: " + Entrypoint + " and the user " + User}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = b.OS, b.Arch, v1.Time{Time: o.Created}
	cfg.Config = v1.Config{User: User, Entrypoint: []string{Entrypoint}, WorkingDir: "/", Labels: labels(o)}
	return mutate.ConfigFile(img, cfg)
}

func labels(o options) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       "hvpa",
		"org.opencontainers.image.description": "hvpa: horizontal and vertical pod autoscaling from one object, and upstream-compatible VPAs",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.created":     o.Created.Format(time.RFC3339),
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
	}
	if o.Revision != "" {
		l["org.opencontainers.image.revision"] = o.Revision
	}
	return l
}

// rootfs is the one layer: /etc/passwd and /etc/group with the non-root user, /tmp, and the binary at
// /hvpa, every entry owned by root with the given modification time.
func rootfs(bin []byte, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entries := []struct {
		name string
		mode int64
		data []byte
		dir  bool
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "hvpa", mode: 0o755, data: bin},
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: mtime, Typeflag: tar.TypeReg, Size: int64(len(e.data)), Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// WriteLayout replaces dir with an OCI image layout holding idx under the reference name version.
func WriteLayout(dir, version string, idx v1.ImageIndex) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": version}))
}
