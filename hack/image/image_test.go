package main

import (
	"archive/tar"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const testVersion = "v0.0.0-imagetest"

// TestImage runs `make image` into a temporary folder and checks what a platform team pulls: the layout's
// multi-arch index, each image's config (non-root user, entrypoint, labels), the binary taken out of the
// amd64 layer running `hvpa version`, the arm64 binary being an arm64 executable, the SBOM, that the same
// binaries give the same digest, and a push to a registry.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hvpa for two platforms; runs in `make test`, not under -short")
	}
	dir := t.TempDir()
	cmd := exec.Command("make", "image", "IMAGE_DIR="+dir, "VERSION="+testVersion, "CREATED=1700000000", "REVISION=")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	images := checkIndex(t, idx)
	for platform, img := range images {
		checkConfig(t, platform, img)
	}
	bin := extract(t, images["linux/amd64"], "hvpa", filepath.Join(dir, "extracted-hvpa"))
	checkRuns(t, bin)
	checkMachine(t, extract(t, images["linux/arm64"], "hvpa", filepath.Join(dir, "extracted-hvpa-arm64")), elf.EM_AARCH64)
	checkSBOM(t, filepath.Join(dir, "sbom.cdx.json"))
	checkReproducible(t, dir, idx)
	checkPush(t, idx)
}

// checkIndex: an OCI index named testVersion with one image per platform; returns them by os/arch.
func checkIndex(t *testing.T, idx v1.ImageIndex) map[string]v1.Image {
	t.Helper()
	outer, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(outer.Manifests) != 1 || outer.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != testVersion {
		t.Fatalf("layout index %+v: want one index named %s", outer.Manifests, testVersion)
	}
	inner, err := idx.ImageIndex(outer.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := inner.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", m.MediaType, types.OCIImageIndex)
	}
	images := map[string]v1.Image{}
	for _, d := range m.Manifests {
		img, err := inner.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		images[d.Platform.OS+"/"+d.Platform.Architecture] = img
	}
	if len(images) != 2 || images["linux/amd64"] == nil || images["linux/arm64"] == nil {
		t.Fatalf("platforms %v, want linux/amd64 and linux/arm64", m.Manifests)
	}
	return images
}

func checkConfig(t *testing.T, platform string, img v1.Image) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.OS + "/" + cfg.Architecture; got != platform {
		t.Errorf("%s: config platform %s", platform, got)
	}
	if cfg.Config.User != "65532:65532" || strings.Join(cfg.Config.Entrypoint, " ") != "/hvpa" {
		t.Errorf("%s: user %q entrypoint %q, want 65532:65532 and /hvpa", platform, cfg.Config.User, cfg.Config.Entrypoint)
	}
	want := map[string]string{"org.opencontainers.image.version": testVersion, "org.opencontainers.image.source": Source,
		"org.opencontainers.image.created": "2023-11-14T22:13:20Z"}
	for k, v := range want {
		if cfg.Config.Labels[k] != v {
			t.Errorf("%s: label %s = %q, want %q", platform, k, cfg.Config.Labels[k], v)
		}
	}
	if !cfg.Created.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("%s: created %s, want the CREATED time", platform, cfg.Created)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("%s: manifest media type %s", platform, mt)
	}
}

// extract writes the file named file of img's only layer to path.
func extract(t *testing.T, img v1.Image, file, path string) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("no %s in the layer", file)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "etc/passwd" {
			data, _ := io.ReadAll(tr)
			if !strings.Contains(string(data), "nonroot:x:65532:65532:") {
				t.Errorf("/etc/passwd does not name the user 65532:\n%s", data)
			}
		}
		if h.Name != file {
			continue
		}
		if h.Mode&0o111 == 0 || h.Uid != 0 {
			t.Errorf("%s: mode %o uid %d, want executable and owned by root", file, h.Mode, h.Uid)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

func checkRuns(t *testing.T, bin string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Logf("cannot run the linux/amd64 binary on %s/%s", runtime.GOOS, runtime.GOARCH)
		return
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("hvpa version from the image: %v", err)
	}
	var info struct{ Version, Platform string }
	if err := json.Unmarshal(out, &info); err != nil || info.Version != testVersion || info.Platform != "linux/amd64" {
		t.Errorf("hvpa version from the image: %s (%v), want %s on linux/amd64", out, err, testVersion)
	}
}

func checkMachine(t *testing.T, bin string, want elf.Machine) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != want {
		t.Errorf("%s is for %s, want %s", bin, f.Machine, want)
	}
}

// checkSBOM: a CycloneDX document for the hvpa module listing the modules the binary links.
func checkSBOM(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name string } `json:"component"`
		} `json:"metadata"`
		Components []struct{ Name, Version string } `json:"components"`
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != "github.com/hvpa-dev/hvpa" {
		t.Errorf("SBOM format %q component %q", bom.BOMFormat, bom.Metadata.Component.Name)
	}
	found := map[string]string{}
	for _, c := range bom.Components {
		found[c.Name] = c.Version
	}
	for _, m := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "github.com/prometheus/client_golang"} {
		if found[m] == "" {
			t.Errorf("SBOM lists no %s (%d components)", m, len(bom.Components))
		}
	}
}

// checkReproducible assembles the image again from the same binaries: the same digest.
func checkReproducible(t *testing.T, dir string, idx v1.ImageIndex) {
	t.Helper()
	o := options{Version: testVersion, Created: time.Unix(1700000000, 0).UTC(), Binaries: []platformBinary{
		{OS: "linux", Arch: "amd64", Path: filepath.Join(dir, "hvpa-linux-amd64")}, {OS: "linux", Arch: "arm64", Path: filepath.Join(dir, "hvpa-linux-arm64")}}}
	again, err := Index(o)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := idx.IndexManifest()
	want := m.Manifests[0].Digest
	if got, _ := again.Digest(); got != want {
		t.Errorf("the same binaries give digest %s, the layout holds %s", got, want)
	}
}

// checkPush pushes the layout's index to a registry and reads the same digest back.
func checkPush(t *testing.T, idx v1.ImageIndex) {
	t.Helper()
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	m, _ := idx.IndexManifest()
	inner, err := idx.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/hvpa-dev/hvpa:" + testVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, inner); err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := got.Digest(); d != m.Manifests[0].Digest {
		t.Errorf("pulled %s, pushed %s", d, m.Manifests[0].Digest)
	}
}
